#!/usr/bin/env bash
# Builds the parallel paths' tests (tests/test_parallel.cpp) with clang under ThreadSanitizer in
# their own build directory and runs them at 1, 2 and 3 threads (the cases choose the counts).
#   scripts/tsan.sh
# OpenMP's runtime is not itself instrumented: LLVM's libomp reports its own synchronisation to
# TSan through the Archer tool (libarcher.so, in libomp-14-dev), loaded with OMP_TOOL_LIBRARIES,
# and TSan ignores what happens inside the (uninstrumented) runtime itself: a report names a race
# in sparsemc's code, not in the runtime's.
# Environment: TSAN_BUILD (default build/tsan), TSAN_CXX (default clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=${TSAN_CXX:-clang++-14}
command -v "$cxx" >/dev/null || { echo "tsan.sh: $cxx not found (Debian: clang-14 libomp-dev)" >&2; exit 1; }
archer=/usr/lib/llvm-14/lib/libarcher.so
[ -f "$archer" ] || { echo "tsan.sh: $archer not found (Debian: libomp-14-dev)" >&2; exit 1; }
build=${TSAN_BUILD:-build/tsan}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DSPARSEMC_USE_OPENMP=ON -DSPARSEMC_BUILD_TOOLS=OFF -DSPARSEMC_BUILD_BENCH=OFF -DSPARSEMC_BUILD_EXAMPLES=OFF \
  >/dev/null
grep -q "SPARSEMC_HAVE_OPENMP:INTERNAL=ON" "$build/CMakeCache.txt" ||
  { echo "tsan.sh: $cxx has no OpenMP here (Debian: libomp-dev)" >&2; exit 1; }
cmake --build "$build" --target test_parallel
OMP_TOOL_LIBRARIES=$archer TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1" "$build/tests/test_parallel"

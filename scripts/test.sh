#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and runs everything CI checks:
#   1. the test suite in Release (g++), then the library's tests again built with clang under
#      AddressSanitizer + UBSan (preset asan: a second compiler for every test, and sanitized
#      tests that run a quarter faster than g++'s; the tools' scripts run in Release only: their
#      readers are fuzzed under the same sanitizers in 5., and the solver registry built
#      sanitized took longer than all the rest of CI). The sanitizer build runs in the
#      background from the end of the Release build on, its tests last. With MPI (Open MPI is
#      among the test packages) both include test_mpi under mpirun with 2 and 3 ranks, and the
#      Release tests sparsemc-train-mpi's script;
#   2. every example program (the distributed one under mpirun -np 2), and the Python package:
#      installed offline into a venv, its tests (pytest) and its examples;
#   3. an install into a temporary prefix and the downstream find_package(sparsemc) example,
#      built with g++ and with clang;
#   4. the benchmarks in their smoke form (bench/compare's is a ctest entry of 1.);
#   5. the readers' libFuzzer harnesses, 10 s each, when clang++-14 is installed;
#   6. the parallel paths' tests under ThreadSanitizer (scripts/tsan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
sparsemc_install_deps "${SPARSEMC_BUILD_PACKAGES[@]}" "${SPARSEMC_TEST_PACKAGES[@]}" "${SPARSEMC_PYTHON_PACKAGES[@]}"
sparsemc_use_ccache

jobs=$(nproc)
# stage NAME: prints the heading; the last lines list every stage's wall-clock seconds, so that
# a CI log says where its time went.
stage_times=()
stage() {
  [ -z "${stage_name:-}" ] || stage_times+=("$(printf '%6d s  %s' $((SECONDS - stage_start)) "$stage_name")")
  stage_name=$1
  stage_start=$SECONDS
  echo "== $1"
}
# Every skip of the last ctest run in BUILD, with its reason (test cases print "SKIPPED...",
# the tool scripts "SKIPPED: missing input ...").
skip_summary() {
  local skips
  skips=$(grep -h '^SKIPPED' "$1/Testing/Temporary/LastTest.log" | sort -u || true)
  if [ -z "$skips" ]; then
    echo "-- skipped: nothing"
  else
    echo "-- skipped ($(wc -l <<<"$skips")):"
    sed 's/^/     /' <<<"$skips"
  fi
}
stage "Release build"
cmake --preset release "${SPARSEMC_LAUNCHER[@]}" >/dev/null
cmake --build --preset release -j "$jobs"
# The sanitizer build starts here, in the background at the lowest priority: it takes the cycles
# the stages below leave idle (pytest, the examples and the benchmarks run on one core, ctest's
# last tests on one), and its tests run at the end.
cmake --preset asan "${SPARSEMC_LAUNCHER[@]}" >/dev/null
asan_log=build/asan/build.log
# Its own process group (job control on for this one job, so that a failure below can stop it
# whole), but the same session: a new session is a new scheduler autogroup, where nice 19 would
# still get half of the machine.
set -m
nice -n 19 cmake --build --preset asan -j "$jobs" >"$asan_log" 2>&1 &
asan_build=$!
set +m
# The build is over by the end of a good run: the kill then fails, which must not fail the run.
cleanup=("kill -- -$asan_build 2>/dev/null || true")
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT
stage "Release tests"
ctest --preset release -j "$jobs"
skip_summary build/release

stage "Example programs"
for example in build/release/examples/example_*; do
  echo "-- $example"
  "$example" >/dev/null
done
if [ -x build/release/examples/mpi_distributed ]; then
  echo "-- build/release/examples/mpi_distributed (mpirun -np 2)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1 \
    mpirun -np 2 build/release/examples/mpi_distributed >/dev/null
fi

stage "Python package: pip install --no-build-isolation ./python into a venv"
venv=build/python-venv
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
# The module is built by CMake in the Release build: it links the registry objects compiled
# there for sparsemc-train, and compiles only core.cpp and the 64-bit-index registry.
SPARSEMC_CMAKE_BUILD_DIR=$PWD/build/release SPARSEMC_BUILD_JOBS=$jobs \
  "$venv/bin/pip" install -q --no-index --no-build-isolation ./python
stage "Python package: pytest and examples"
SPARSEMC_TOOLS=build/release/tools "$venv/bin/python" -m pytest -q -rs python/tests
(cd "$(mktemp -d)" && for example in "$OLDPWD"/examples/python/*.py; do
   echo "-- $example"
   "$OLDPWD/$venv/bin/python" "$example" >/dev/null
 done)

stage "Install and the downstream find_package example"
prefix=$(mktemp -d)
cleanup+=("rm -rf '$prefix'")
cmake --install build/release --prefix "$prefix" >/dev/null
cmake -S examples/downstream -B "$prefix/downstream-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/downstream-build" >/dev/null
"$prefix/downstream-build/downstream"
# The same project built with clang: the installed headers must compile with both compilers.
cmake -S examples/downstream -B "$prefix/downstream-clang" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$prefix/downstream-clang" >/dev/null
"$prefix/downstream-clang/downstream"

stage "Benchmarks (smoke)"
benches=(build/release/bench/bench_*)
if [ -x "${benches[0]}" ]; then
  for bench in "${benches[@]}"; do
    "$bench" --benchmark_min_time=0.01 >/dev/null
  done
else
  echo "-- skipped: no benchmark programs were built (Google Benchmark, libbenchmark-dev, not found)"
fi
if [ -x build/release/bench/parse_file ]; then
  bench/threads_compare.py --smoke --build build/release >/dev/null
fi
bench/auto_shape.py --smoke --build build/release >/dev/null
if [ -x build/release/tools/sparsemc-train-mpi ]; then
  bench/mpi_compare.py --smoke --build build/release >/dev/null
fi
"$venv/bin/python" bench/python_vs_sklearn.py --smoke >/dev/null

stage "Fuzzing the readers (short run; scripts/fuzz.sh SECONDS for a long one)"
if command -v clang++-14 >/dev/null; then
  scripts/fuzz.sh 10
else
  echo "-- skipped: clang++-14 not installed"
fi

stage "ThreadSanitizer: the parallel paths (scripts/tsan.sh)"
if command -v clang++-14 >/dev/null && [ -f /usr/lib/llvm-14/lib/libarcher.so ]; then
  scripts/tsan.sh
else
  echo "-- skipped: clang++-14 or libomp-14-dev not installed"
fi

stage "Sanitizer build (ASan + UBSan): what the background build has left"
if ! wait "$asan_build"; then
  tail -n 60 "$asan_log"
  echo "test.sh: the sanitizer build failed; full log in $asan_log" >&2
  exit 1
fi
stage "Sanitizer tests"
ctest --preset asan -j "$jobs"
skip_summary build/asan
stage "done"
echo "== Wall-clock time per stage (total $SECONDS s)"
printf '%s\n' "${stage_times[@]}"

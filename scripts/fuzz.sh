#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the readers (tests/fuzz, issue 17) with clang++-14 in their
# own build directory and runs each for SECONDS (default 10) on a copy of its seed corpus.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     e.g. scripts/fuzz.sh 600 native_model
# Environment: FUZZ_BUILD (default build/fuzz), FUZZ_WORK (default $FUZZ_BUILD/work: the grown
# corpora and any crash-* reproducers), FUZZ_JOBS (parallel builds and harness runs, default 2).
# Exits non-zero when a harness finds a crash, leak, timeout or out-of-memory input.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(libsvm libsvm_compressed native_model staged_model liblinear_model)
cxx=${FUZZ_CXX:-clang++-14}
command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (Debian: clang-14 libclang-rt-14-dev)" >&2; exit 1; }
build=${FUZZ_BUILD:-build/fuzz}
work=${FUZZ_WORK:-$build/work}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DSPARSEMC_FUZZ=ON -DSPARSEMC_BUILD_TESTS=OFF -DSPARSEMC_BUILD_TOOLS=OFF -DSPARSEMC_BUILD_BENCH=OFF \
  -DSPARSEMC_BUILD_EXAMPLES=OFF >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]}"
# fuzz_one HARNESS: runs it on a copy of its seeds and prints its summary in one piece (the
# harnesses run FUZZ_JOBS at a time); non-zero when it found something.
fuzz_one() {
  local h=$1 corpus="$work/$1/corpus" seeds=tests/fuzz/corpus/${1%_model} summary status=0
  [ "$h" = libsvm_compressed ] && seeds=tests/fuzz/corpus/compressed
  mkdir -p "$corpus" "$work/$h/artifacts"
  "$build/tests/fuzz/fuzz_$h" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=4096 -timeout=120 \
    -rss_limit_mb=4096 -artifact_prefix="$work/$h/artifacts/" -print_final_stats=1 2>"$work/$h/log" || status=1
  summary=$(grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$work/$h/log" | sed 's/^/  /' || true)
  echo "== fuzz_$h: ${seconds}s (seeds $seeds)"
  [ -z "$summary" ] || echo "$summary"
  [ $status -eq 0 ] || echo "fuzz_$h: FAILED, see $work/$h/log and $work/$h/artifacts/" >&2
  return $status
}
parallel=${FUZZ_JOBS:-2}
status=0
for ((first = 0; first < ${#harnesses[@]}; first += parallel)); do
  pids=()
  for h in "${harnesses[@]:first:parallel}"; do
    fuzz_one "$h" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
exit $status

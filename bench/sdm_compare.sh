#!/usr/bin/env bash
# The ridge-only Crammer–Singer SVM: sparsemc-train's default (auto → sdm, certified relative gap
# ≤ 1e-3) against LIBLINEAR -s 4 at its defaults, side by side, on generated extreme data and on
# sector (when ../shared/data is there).
#
#   bench/sdm_compare.sh BUILD_DIR [WORK_DIR]
#
# Data: bench_fcbcfw gen, n = 10000, d = 30000, 40 nonzeros per sample, power-law class sizes
# (Zipf exponent 1), K = 10, 100, 1000, 8000. C = 1 (μ = 1/n). For each: whole-process time
# (user + sys CPU seconds) and peak memory of both, their ratio, and objective (1) of both
# models evaluated by sparsemc-eval (so "our F ≤ LIBLINEAR's F" means we reached its objective).
# REPEAT (default 3) interleaved pairs; the median ratio is printed. KS overrides the K list.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
data=${SPARSEMC_SHARED_DATA:-$here/../../shared/data}
repeat=${REPEAT:-3}
mkdir -p "$work"
train=$build/tools/sparsemc-train
evaluate=$build/tools/sparsemc-eval

cpu() {  # cpu OUT CMD...: runs CMD, prints "cpu_seconds peak_kb"
  local out=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$out" 2>&1
  awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time.txt"
}
objective() {  # objective DATA MODEL MU
  "$evaluate" --loss crammer-singer --penalty none --lambda 0 --mu "$3" --json "$1" "$2" |
    python3 -c 'import json,sys; print("%.8f" % json.load(sys.stdin)["objective"])'
}
compare() {  # compare NAME FILE
  local name=$1 file=$2
  local n
  n=$(wc -l < "$file")
  local mu
  mu=$(python3 -c "print(1/$n)")
  local ratios=()
  local ours theirs
  for _ in $(seq "$repeat"); do
    theirs=$(cpu "$work/ll.log" liblinear-train -s 4 -c 1 "$file" "$work/ll.model")
    ours=$(cpu "$work/sdm.log" "$train" --loss crammer-singer --penalty none --mu "$mu" "$file" "$work/sdm.model")
    ratios+=("$(python3 -c "print(${ours%% *} / ${theirs%% *})")")
  done
  local median
  median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '%-22s time ratio %.2f (pairs: %s)  memory %s KB / %s KB  F ours %s  F liblinear %s  (%s)\n' \
    "$name" "$median" "${ratios[*]}" "${ours##* }" "${theirs##* }" \
    "$(objective "$file" "$work/sdm.model" "$mu")" "$(objective "$file" "$work/ll.model" "$mu")" \
    "$(grep -o 'status [a-z_]* after [0-9]* epochs' "$work/sdm.log")"
}

for K in ${KS:-10 100 1000 8000}; do
  file=$work/zipf_K$K.svm
  [ -f "$file" ] || "$build/bench/bench_fcbcfw" gen "$file" 10000 30000 "$K" 40 1 1 1.0
  compare "generated K=$K" "$file"
done
if [ -f "$data/multiclass/sector.scale.bz2" ]; then
  [ -f "$work/sector.scale" ] || bzcat "$data/multiclass/sector.scale.bz2" > "$work/sector.scale"
  compare "sector" "$work/sector.scale"
fi

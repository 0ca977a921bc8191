#!/usr/bin/env bash
# The multilabel tail (issue 16): sparsemc-train's default fcbcfw fit of the separation-ranking
# Crammer–Singer hinge + ℓ1 on bibtex (certified relative gap ≤ 1e-3) against PD-Sparse's
# `multiTrain -s 1 -l 1 -c 1 -r 1 -u` (its default 50 iterations), side by side.
#
#   bench/fcbcfw_multilabel.sh BUILD_DIR PDSPARSE_DIR [WORK_DIR]
#
# PDSPARSE_DIR holds a build of PD-Sparse (github.com/a061105/ExtremeMulticlass, `make
# multiTrain multiPred`). λ' = 1, C = 1 is (1) with λ = μ = 1/n. REPEAT (default 3) interleaved
# pairs of whole processes (user + sys CPU seconds, peak memory); for each model objective (1)
# (bench/pdsparse_objective.py for PD-Sparse's file) and precision@1 on bibtex.test.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR PDSPARSE_DIR [WORK_DIR]}
pdsparse=${2:?usage: $0 BUILD_DIR PDSPARSE_DIR [WORK_DIR]}
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
data=${SPARSEMC_SHARED_DATA:-$here/../../shared/data}/multilabel
repeat=${REPEAT:-3}
mkdir -p "$work"
[ -f "$data/bibtex.train" ] || { echo "skipped: $data/bibtex.train is not there"; exit 0; }
n=$(wc -l < "$data/bibtex.train")
rate=$(awk -v n="$n" 'BEGIN { printf "%.10g", 1 / n }')

cpu() {  # cpu OUT CMD...: runs CMD, prints "cpu_seconds peak_kb"
  local out=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$out" 2>&1
  awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time.txt"
}

ratios=()
for r in $(seq "$repeat"); do
  read -r ours ours_kb < <(cpu "$work/ours.log" "$build/tools/sparsemc-train" --loss crammer-singer --penalty l1 \
    --lambda "$rate" --mu "$rate" --json "$data/bibtex.train" "$work/ours.model" --test "$data/bibtex.test")
  read -r theirs theirs_kb < <(cpu "$work/pds.log" "$pdsparse/multiTrain" -s 1 -l 1 -c 1 -r 1 -u \
    "$data/bibtex.train" "$work/pds.model")
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
  ratios+=("$ratio")
  echo "pair $r: sparsemc ${ours} s ${ours_kb} KB, PD-Sparse ${theirs} s ${theirs_kb} KB, ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "median ratio " a[int((NR + 1) / 2)] }'
/usr/bin/python3 -c '
import json, sys
r = json.loads([line for line in open(sys.argv[1]) if line.startswith("{")][-1])
print("sparsemc: status", r["status"], "epochs", r["epochs"], "F", r["objective"], "relative gap", r["relative_gap"],
      "precision@1", r["test_precision_at_1"])' "$work/ours.log"
echo "PD-Sparse: $(/usr/bin/python3 "$here/pdsparse_objective.py" "$data/bibtex.train" "$work/pds.model" "$rate" "$rate"), $("$pdsparse/multiPred" "$data/bibtex.test" "$work/pds.model" 1 2>&1 | grep -i 'acc')"

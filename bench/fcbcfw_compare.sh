#!/usr/bin/env bash
# FCBCFW (PD-Sparse) against LIBLINEAR -s 4 (Crammer–Singer), side by side, in one run.
#
#   bench/fcbcfw_compare.sh BUILD_DIR [WORK_DIR]
#
# BUILD_DIR holds bench/bench_fcbcfw (cmake --build BUILD_DIR --target bench_fcbcfw). Times are
# CPU seconds (user + sys), so the ratios hold on a shared machine; peak memory is the maximum
# resident set size. Every objective is (1): C = 1 means μ = 1/n, λ = λ'/n (PD-Sparse's -l λ').
#
# 1. sector (../shared/data), λ = 0: CPU time until FCBCFW's objective (evaluated at the end of
#    an epoch, exact) reaches LIBLINEAR's at its default -e 0.1, over LIBLINEAR's time (both
#    including reading the file).
# 2. sector, λ' ∈ {0.01, 0.02, 0.05, 0.1, 1} chosen by held-out accuracy with PD-Sparse's early stop
#    (-h/-e: stop after 3 epochs without improvement, keep the best model); the test file serves
#    as the held-out set (optimistic: the stop and the choice see the test labels). Time and
#    nonzero weights over LIBLINEAR's. 2b: the held-out set is a tenth of the training file
#    (HOLDOUT_SEED, default 1), λ' ∈ {0.01, 0.1, 1, 10} (the paper's grid), both solvers train
#    on the other nine tenths, accuracy on the test file.
# 3. Scaling in K on generated data (bench_fcbcfw gen): n = 20000, d = 50000, 40 nonzeros per
#    row, K = 1000, 4000, 16000; λ' = 0.1, C = 1, tol 1e-2 (bi-stochastic search, the default for
#    K ≥ 1000). LIBLINEAR -s 4 -c 1 on the same files (model written to /dev/null), capped at
#    LIBLINEAR_TIMEOUT seconds (default 1800). K_SCALING=0 skips this part.
set -euo pipefail

build=${1:?usage: $0 BUILD_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
bench=$build/bench/bench_fcbcfw
here=$(cd "$(dirname "$0")" && pwd)
data=${SPARSEMC_SHARED_DATA:-$here/../../shared/data}
timeout_ll=${LIBLINEAR_TIMEOUT:-1800}
mkdir -p "$work"

# `timed OUT CMD...`: runs CMD, stdout to OUT, and prints "cpu_seconds peak_kb".
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$@" > "$out" || true
  awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time.txt"
}
field() { tr ' ' '\n' < "$1" | sed -n "s/^$2=//p" | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
# `consider LAMBDA HELDOUT_ACC CPU NNZ`: keeps the λ' of the best held-out accuracy so far.
consider() {
  if awk -v a="$2" -v b="$best_acc" 'BEGIN { exit !(a > b) }'; then
    best_lp=$1 best_acc=$2 best_cpu=$3 best_nnz=$4
  fi
}
chosen() {
  echo
  echo "Chosen λ' = $best_lp (held-out accuracy $best_acc): time ratio $(ratio "$best_cpu" "$ll_cpu")," \
       "LIBLINEAR/FCBCFW nonzeros $(ratio "$ll_nnz" "$best_nnz")×"
  echo
}

echo "# FCBCFW vs LIBLINEAR -s 4 ($(date -u +%Y-%m-%d), $(nproc) cores, CPU seconds)"
echo

# --- 1. sector, λ = 0 -----------------------------------------------------------------------
if [[ -f $data/multiclass/sector.scale.bz2 ]]; then
  bzcat "$data/multiclass/sector.scale.bz2" > "$work/sector.train"
  bzcat "$data/multiclass/sector.t.scale.bz2" > "$work/sector.test"
  read -r ll_cpu ll_kb < <(timed "$work/ll.out" liblinear-train -q -s 4 -c 1 "$work/sector.train" "$work/sector.model")
  "$bench" objective "$work/sector.train" "$work/sector.model" 1 > "$work/ll_obj.out"
  ll_obj=$(field "$work/ll_obj.out" objective)
  ll_nnz=$(field "$work/ll_obj.out" nnz)
  liblinear-predict "$work/sector.test" "$work/sector.model" /dev/null > "$work/ll_acc.out"
  ll_acc=$(sed -n 's/Accuracy = \([0-9.]*\)%.*/\1/p' "$work/ll_acc.out")
  echo "## sector (n = 6412, d = 55197, K = 105), C = 1"
  echo
  echo "LIBLINEAR -s 4 -c 1: ${ll_cpu} s, objective ${ll_obj}, nnz ${ll_nnz}, test accuracy ${ll_acc}%"
  echo
  read -r our_cpu our_kb < <(timed "$work/ours0.out" "$bench" fit "$work/sector.train" --C 1 --lambda-pd 0 \
    --search exact --tol 1e-4 --max-epochs 200 --target "$ll_obj" --test "$work/sector.test")
  reach=$(sum "$(field "$work/ours0.out" read_cpu)" "$(field "$work/ours0.out" time_to_target)")
  echo "| run | CPU s | ratio to LIBLINEAR | objective | nnz | nnz ratio | test acc |"
  echo "|---|---|---|---|---|---|---|"
  echo "| LIBLINEAR -s 4 -c 1 (-e 0.1) | $ll_cpu | 1 | $ll_obj | $ll_nnz | 1 | ${ll_acc}% |"
  echo "| FCBCFW λ=0, to LIBLINEAR's objective (epoch $(field "$work/ours0.out" epoch_to_target)) | $reach |" \
       "$(ratio "$reach" "$ll_cpu") | ≤ $ll_obj | | | |"
  echo "| FCBCFW λ=0, gap 1e-4 | $our_cpu | $(ratio "$our_cpu" "$ll_cpu") | $(field "$work/ours0.out" objective) |" \
       "$(field "$work/ours0.out" nnz) | $(ratio "$(field "$work/ours0.out" nnz)" "$ll_nnz") | $(field "$work/ours0.out" test_accuracy) |"
  best_acc=-1
  for lp in 0.01 0.02 0.05 0.1 1; do
    read -r cpu kb < <(timed "$work/ours_$lp.out" "$bench" fit "$work/sector.train" --C 1 --lambda-pd "$lp" \
      --tol 1e-3 --max-epochs 200 --heldout "$work/sector.test" --test "$work/sector.test")
    acc=$(field "$work/ours_$lp.out" test_accuracy)
    nnz=$(field "$work/ours_$lp.out" nnz)
    echo "| FCBCFW λ'=$lp, held-out early stop ($(field "$work/ours_$lp.out" status), $(field "$work/ours_$lp.out" epochs) epochs) |" \
         "$cpu | $(ratio "$cpu" "$ll_cpu") | $(field "$work/ours_$lp.out" objective) | $nnz | $(ratio "$nnz" "$ll_nnz") | $acc |"
    consider "$lp" "$acc" "$cpu" "$nnz"
  done
  chosen
  # 2b. The same with a held-out set apart from the test file: a tenth of the training file
  #     (seeded), λ' on the paper's grid, both solvers trained on the other nine tenths.
  awk -v seed="${HOLDOUT_SEED:-1}" -v fit="$work/sector.fit" -v hold="$work/sector.hold" \
    'BEGIN { srand(seed) } { if (rand() < 0.1) print > hold; else print > fit }' "$work/sector.train"
  read -r ll_cpu ll_kb < <(timed "$work/ll_fit.out" liblinear-train -q -s 4 -c 1 "$work/sector.fit" "$work/sector_fit.model")
  "$bench" objective "$work/sector.fit" "$work/sector_fit.model" 1 > "$work/ll_fit_obj.out"
  ll_nnz=$(field "$work/ll_fit_obj.out" nnz)
  ll_acc=$(liblinear-predict "$work/sector.test" "$work/sector_fit.model" /dev/null | sed -n 's/Accuracy = \([0-9.]*\)%.*/\1/p')
  echo "Held out: $(wc -l < "$work/sector.hold") of $(wc -l < "$work/sector.train") training samples (seed ${HOLDOUT_SEED:-1})."
  echo
  echo "| run | CPU s | ratio to LIBLINEAR | nnz | nnz ratio | held-out acc | test acc |"
  echo "|---|---|---|---|---|---|---|"
  echo "| LIBLINEAR -s 4 -c 1 | $ll_cpu | 1 | $ll_nnz | 1 | | ${ll_acc}% |"
  best_acc=-1
  for lp in 0.01 0.1 1 10; do
    read -r cpu kb < <(timed "$work/split_$lp.out" "$bench" fit "$work/sector.fit" --C 1 --lambda-pd "$lp" \
      --tol 1e-3 --max-epochs 200 --heldout "$work/sector.hold" --test "$work/sector.test")
    acc=$(field "$work/split_$lp.out" heldout_accuracy)
    nnz=$(field "$work/split_$lp.out" nnz)
    echo "| FCBCFW λ'=$lp ($(field "$work/split_$lp.out" epochs) epochs) | $cpu | $(ratio "$cpu" "$ll_cpu") | $nnz |" \
         "$(ratio "$nnz" "$ll_nnz") | $acc | $(field "$work/split_$lp.out" test_accuracy) |"
    consider "$lp" "$acc" "$cpu" "$nnz"
  done
  chosen
else
  echo "SKIPPED sector: $data/multiclass/sector.scale.bz2 not found"
fi

# --- 3. scaling in K --------------------------------------------------------------------------
if [[ ${K_SCALING:-1} == 0 ]]; then
  echo "Work files in $work"
  exit 0
fi
echo "## Scaling in K (generated: n = 20000, d = 50000, 40 nonzeros per row), λ' = 0.1, C = 1, tol 1e-2"
echo
echo "| K | FCBCFW CPU s | ratio to K=1000 | peak MB | epochs | gap | nnz(W) | test acc | LIBLINEAR CPU s | LIBLINEAR peak MB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
base=
for K in 1000 4000 16000; do
  "$bench" gen "$work/gen$K.train" 20000 50000 "$K" 40 1 1
  "$bench" gen "$work/gen$K.test" 5000 50000 "$K" 40 1 2
  read -r cpu kb < <(timed "$work/gen$K.out" "$bench" fit "$work/gen$K.train" --C 1 --lambda-pd 0.1 --tol 1e-2 \
    --max-epochs 300 --test "$work/gen$K.test")
  fit=$(field "$work/gen$K.out" fit_cpu)
  base=${base:-$fit}
  read -r ll_cpu ll_kb < <(timed "$work/llgen$K.out" timeout "$timeout_ll" liblinear-train -q -s 4 -c 1 \
    "$work/gen$K.train" /dev/null)
  echo "| $K | $fit | $(ratio "$fit" "$base") | $((kb / 1024)) | $(field "$work/gen$K.out" epochs) |" \
       "$(field "$work/gen$K.out" gap) | $(field "$work/gen$K.out" nnz) | $(field "$work/gen$K.out" test_accuracy) |" \
       "$ll_cpu | $((ll_kb / 1024)) |"
done
echo
echo "Work files in $work"

#!/usr/bin/env bash
# The README's main job: build the command-line tools (Release) and train a sparse multiclass
# model on the bundled LIBSVM dna data with the default solver, then report its test accuracy
# on data/dna.scale.t, its nonzero feature rows, its objective (1) and the training time.
#
# Installs the Debian packages it needs when they are missing (as root, or through sudo):
#   cmake ninja-build g++ libeigen3-dev zlib1g-dev libbz2-dev libcli11-dev nlohmann-json3-dev
# Extra arguments are passed to sparsemc-train, e.g.  bash scripts/run.sh --loss logistic --path 10
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ libeigen3-dev zlib1g-dev libbz2-dev libcli11-dev nlohmann-json3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== Installing missing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run.sh: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=build/run
echo "== Building the tools (Release) in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEMC_BUILD_TOOLS=ON \
  -DSPARSEMC_BUILD_TESTS=OFF -DSPARSEMC_BUILD_BENCH=OFF -DSPARSEMC_BUILD_EXAMPLES=OFF >/dev/null
if ! cmake --build "$build" --target sparsemc-train sparsemc-predict sparsemc-eval -j "$(nproc)" >"$build/build.log" 2>&1; then
  tail -n 60 "$build/build.log" >&2
  echo "run.sh: the build failed; full log in $build/build.log" >&2
  exit 1
fi

model="$build/dna.model"
echo
echo "== $build/tools/sparsemc-train --lambda 0.01 --test data/dna.scale.t${*:+ $*} data/dna.scale $model"
echo "   (squared hinge + l1/l2 group penalty, default solver; data: LIBSVM dna, 2000 train / 1186 test, 180 features, 3 classes)"
"$build/tools/sparsemc-train" --lambda 0.01 --test data/dna.scale.t "$@" data/dna.scale "$model"
echo
echo "== Model saved to $model; predict with:"
echo "   $build/tools/sparsemc-predict data/dna.scale.t $model predictions.txt"

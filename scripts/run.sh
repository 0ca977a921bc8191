#!/usr/bin/env bash
# The README's main job: build sparsemc-train (Release) and train a sparse multiclass model on
# the bundled LIBSVM dna data with the default solver, then report its test accuracy on
# data/dna.scale.t, its nonzero feature rows, its objective (1) and the training time. The
# build is the tool's double-precision fits only (-DSPARSEMC_TOOLS_FLOAT=OFF: half the compile
# time of the full registry, whose --float the test command's build has); sparsemc-predict and
# sparsemc-eval are one `cmake --build build/run --target ...` away.
#
# Installs the Debian packages it needs when they are missing (as root, or through sudo):
#   cmake ninja-build g++ ccache libeigen3-dev zlib1g-dev libbz2-dev libcli11-dev nlohmann-json3-dev
# Extra arguments are passed to sparsemc-train, e.g.  bash scripts/run.sh --loss logistic --path 10
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/deps.sh
sparsemc_install_deps "${SPARSEMC_BUILD_PACKAGES[@]}"
sparsemc_use_ccache

build=build/run
echo "== Building sparsemc-train (Release) in $build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEMC_BUILD_TOOLS=ON -DSPARSEMC_TOOLS_FLOAT=OFF \
  -DSPARSEMC_BUILD_TESTS=OFF -DSPARSEMC_BUILD_BENCH=OFF -DSPARSEMC_BUILD_EXAMPLES=OFF "${SPARSEMC_LAUNCHER[@]}" >/dev/null
if ! cmake --build "$build" --target sparsemc-train -j "$(nproc)" >"$build/build.log" 2>&1; then
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
echo "   cmake --build $build --target sparsemc-predict && $build/tools/sparsemc-predict data/dna.scale.t $model predictions.txt"

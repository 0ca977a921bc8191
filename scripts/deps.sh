#!/usr/bin/env bash
# Installs the given Debian packages if they are missing (as root, or through sudo).
# Sourced by scripts/run.sh and scripts/test.sh.
SPARSEMC_BUILD_PACKAGES=(cmake ninja-build g++ ccache libeigen3-dev zlib1g-dev libbz2-dev libcli11-dev nlohmann-json3-dev)
# clang with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev is only recommended by clang,
# and the packages are installed without recommendations): the sanitizer build and the fuzzers.
# Open MPI: sparsemc::mpi, sparsemc-train-mpi and their tests under mpirun.
SPARSEMC_TEST_PACKAGES=(catch2 libbenchmark-dev liblinear-tools python3-numpy python3-scipy python3-sklearn
                        python3-matplotlib python3-cvxopt clang libclang-rt-14-dev libomp-dev
                        libopenmpi-dev openmpi-bin)
# The Python package (python/): built offline with Debian's pybind11 and setuptools, tested with pytest.
SPARSEMC_PYTHON_PACKAGES=(python3-venv python3-setuptools python3-pybind11 pybind11-dev python3-pytest)
sparsemc_install_deps() {
  local packages=("$@")
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run as root (or install sudo) to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Puts ccache in front of the compiler when it is installed, with paths hashed relative to
# the source tree, so that rebuilds (and other clones on the same machine) reuse unchanged
# objects: sets SPARSEMC_LAUNCHER to the CMake argument (empty without ccache).
sparsemc_use_ccache() {
  SPARSEMC_LAUNCHER=()
  command -v ccache >/dev/null || return 0
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  SPARSEMC_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}

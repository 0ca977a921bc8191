#!/usr/bin/env bash
# Installs the Debian packages sparsemc's build, tests, tools and benchmarks use, if missing.
# Sourced by scripts/run.sh and scripts/test.sh; needs root (or sudo) only when something is missing.
sparsemc_install_deps() {
  local packages=(cmake ninja-build g++ libeigen3-dev catch2 libbenchmark-dev zlib1g-dev libbz2-dev
                  libcli11-dev nlohmann-json3-dev liblinear-tools python3-numpy python3-scipy
                  python3-sklearn python3-matplotlib "$@")
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

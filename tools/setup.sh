#!/usr/bin/env bash
# Installs, from Debian's packages only, everything relaxvm needs to build and test.
# Safe to run again: nothing is installed when everything is there. llvm-16 provides the symbolizer
# that makes sanitizer reports readable.
set -euo pipefail
packages=(
  meson ninja-build python3 pkg-config
  g++ clang-16 libclang-rt-16-dev llvm-16
  doctest-dev libdlpack-dev xtensor-dev libboost1.81-dev nlohmann-json3-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
  valgrind
  libcli11-dev pybind11-dev python3-dev python3-numpy cmake
  libonnx-testdata
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "tools/setup.sh: these Debian packages are missing: ${missing[*]}" >&2
    echo "install them as root (apt-get install ${missing[*]}), or run this script as root" >&2
    exit 1
  fi
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

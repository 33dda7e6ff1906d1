#!/usr/bin/env bash
# Builds the benchmarks with optimization (-O3, no assertions) and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ ! -d build-release ]; then
  meson setup build-release --buildtype=release -Dtests=false >/dev/null  # as tools/check.sh
fi
ninja -C build-release >/dev/null
build-release/bench/bench_dispatch "$@"
echo
if [ -x build-release/bench/bench_mlp ]; then
  build-release/bench/bench_mlp "$@"
fi
echo
if [ -x build-release/bench/bench_graph ]; then
  build-release/bench/bench_graph "$@"
fi
echo
build-release/bench/bench_lower "$@"
echo
build-release/bench/bench_load "$@"
echo
build-release/bench/bench_conv "$@"
echo
build-release/bench/bench_gemm "$@"
# Whole models against torch (issue 35): needs /usr/bin/python3 with torch, torchvision and onnx
# and the relaxvm tool; exits 77 (skipped) without them.
if [ -x build-release/cli/relaxvm ]; then
  echo
  /usr/bin/python3 bench/models.py --relaxvm build-release/cli/relaxvm "$@" || [ $? -eq 77 ]
fi

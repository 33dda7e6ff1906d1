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

#!/usr/bin/env bash
# Builds the benchmarks with optimization (-O3, no assertions) and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ ! -d build-release ]; then
  meson setup build-release --buildtype=release -Dtests=false -Dexamples=false >/dev/null
fi
ninja -C build-release bench/bench_dispatch >/dev/null
build-release/bench/bench_dispatch "$@"

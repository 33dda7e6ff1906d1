#!/usr/bin/env bash
# Builds and runs the showcase, examples/quickstart.cpp (the Relax VM design's examples on relaxvm),
# and builds the command-line tool beside it (build-showcase/cli/relaxvm; README, "The relaxvm
# tool"), which it runs once on a program to show it works. Installs the Debian packages it needs
# first (tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ ! -d build-showcase ]; then
  meson setup build-showcase -Dtests=false -Dbench=false -Dpython=false >/dev/null
fi
ninja -C build-showcase examples/quickstart cli/relaxvm >/dev/null
build-showcase/examples/quickstart
echo
echo "== the relaxvm tool: build-showcase/cli/relaxvm (meson install -C build-showcase installs it)"
build-showcase/cli/relaxvm --help | sed -n 1,3p  # sed reads it all: no SIGPIPE under pipefail

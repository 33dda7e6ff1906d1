#!/usr/bin/env bash
# Builds and runs the showcase, examples/quickstart.cpp (the Relax VM design's examples on relaxvm).
# Installs the Debian packages it needs first (tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
if [ ! -d build-showcase ]; then
  meson setup build-showcase -Dtests=false -Dbench=false >/dev/null
fi
ninja -C build-showcase examples/quickstart >/dev/null
exec build-showcase/examples/quickstart

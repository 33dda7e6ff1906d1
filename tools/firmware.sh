#!/usr/bin/env bash
# Builds examples/firmware/main.cpp for the Cortex-M3 of the MPS2 AN385 board and runs it under
# QEMU with semihosting. The exit status is the program's: 0 when the network's result is right
# and it made no heap allocation.
#
#   tools/firmware.sh [OUT_DIR] [EXAMPLE]   build OUT_DIR/EXAMPLE.elf (default build-firmware, main),
#                                           then run it
#
# EXAMPLE is examples/firmware/EXAMPLE.cpp: main (the network written as bytecode) or ir (written as
# IR and lowered at compile time).
#
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib and
# qemu-system-arm (tools/setup.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/build-firmware}"
example="${2:-main}"
mkdir -p "$out"
# The firmware flags, one per line, shared with tools/size_report.py.
mapfile -t FIRMWARE_FLAGS < "$root/tools/firmware_flags.txt"
# dlpack.h is the one header the core needs from outside the toolchain: Debian's, after the
# toolchain's own directories.
arm-none-eabi-g++ "${FIRMWARE_FLAGS[@]}" -I"$root/include" -idirafter /usr/include \
  "$root/examples/firmware/$example.cpp" -T "$root/examples/firmware/mps2_an385.ld" -nostartfiles \
  --specs=nosys.specs -Wl,--gc-sections \
  -Wl,--wrap=_malloc_r,--wrap=_calloc_r,--wrap=_realloc_r,--wrap=_memalign_r -o "$out/$example.elf"
exec timeout 60 qemu-system-arm -M mps2-an385 -nographic -semihosting -kernel "$out/$example.elf"

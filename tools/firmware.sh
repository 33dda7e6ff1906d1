#!/usr/bin/env bash
# Builds an example of examples/firmware for the Cortex-M3 of the MPS2 AN385 board and runs it
# under QEMU with semihosting. The exit status is the program's: 0 when the network's result is
# right and no heap allocation was made from reset on.
#
#   tools/firmware.sh [--cpu CPU] [--icount] [OUT_DIR] [EXAMPLE] [TOOLCHAIN] [FLAGS...]
#   tools/firmware.sh --probe OUT_DIR SOURCE TOOLCHAIN [FLAGS...]
#
# --cpu: cortex-m3 (the default: the MPS2 AN385 board, soft float) or cortex-m4 (the AN386 board,
# with its single-precision FPU: -mfloat-abi=hard; board.hpp turns the FPU on at reset). Both
# boards have the same memory map. --icount runs QEMU with -icount shift=0 (one nanosecond of
# virtual time per instruction: the board's timers then count instructions). QEMU runs in the
# current directory, where semihosting opens files (examples/firmware/model.cpp reads in.npy).
# OUT_DIR: where EXAMPLE.elf and EXAMPLE.map go (default build-firmware). EXAMPLE is
# examples/firmware/EXAMPLE.cpp: main (the network written as bytecode) or ir (written as IR and
# lowered at compile time). TOOLCHAIN: gcc (arm-none-eabi-g++ -Os, the default), gcc-lto (the same
# with -flto) or clang (clang 16 -Oz with the GNU toolchain's headers and libraries). FLAGS are
# added to the compile command (e.g. -DRELAXVM_ERROR_TEXT=0).
#
# --probe builds SOURCE (a path under the repository) into OUT_DIR/probe.elf and .map without
# running it: a size probe of tools/size/, whose entry point is relaxvm_size_probe and which has
# no startup code (tools/size_report.py measures them). This script is the one place that knows
# how each toolchain builds for the board.
#
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, libstdc++-arm-none-eabi-newlib, qemu-system-arm
# and clang-16 (tools/setup.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
probe=0
cpu=cortex-m3
icount=()
while [[ "${1:-}" == "--cpu" || "${1:-}" == "--icount" ]]; do
  if [[ "$1" == "--icount" ]]; then icount=(-icount shift=0,align=off,sleep=off); shift; continue; fi
  cpu="${2:-}"
  shift 2
done
case "$cpu" in
  cortex-m3) cpu_flags=(-mcpu=cortex-m3); machine=mps2-an385 ;;
  cortex-m4) cpu_flags=(-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16); machine=mps2-an386 ;;
  *) echo "firmware.sh: unknown --cpu '$cpu' (cortex-m3 or cortex-m4)" >&2; exit 2 ;;
esac
if [[ "${1:-}" == "--probe" ]]; then
  probe=1
  shift
  if (( $# < 3 )); then
    echo "usage: firmware.sh --probe OUT_DIR SOURCE TOOLCHAIN [FLAGS...] (SOURCE relative to the repository)" >&2
    exit 2
  fi
fi
out="${1:-$root/build-firmware}"
example="${2:-main}"
toolchain="${3:-gcc}"
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$out"
if (( probe )); then
  source="$root/$example"
  name=probe
else
  source="$root/examples/firmware/$example.cpp"
  name="$example"
fi
# The firmware flags, one per line; the CPU's in place of the file's -mcpu.
mapfile -t file_flags < "$root/tools/firmware_flags.txt"
flags=("${cpu_flags[@]}")
for f in "${file_flags[@]}"; do [[ "$f" == -mcpu=* ]] || flags+=("$f"); done
obj="$out/$name.o"
case "$toolchain" in
  gcc) arm-none-eabi-g++ "${flags[@]}" "$@" -I"$root/include" -idirafter /usr/include -c "$source" -o "$obj"
       link_flags=() ;;
  gcc-lto) arm-none-eabi-g++ "${flags[@]}" -flto "$@" -I"$root/include" -idirafter /usr/include -c "$source" -o "$obj"
           link_flags=(-flto -Os -ffunction-sections -fdata-sections) ;;
  clang)
    [[ "$cpu" == cortex-m3 ]] || { echo "firmware.sh: the clang build is for the cortex-m3" >&2; exit 2; }
    # The include directories arm-none-eabi-g++ uses, for clang to find the same headers.
    includes=()
    while read -r dir; do includes+=(-isystem "$dir"); done < <(
      arm-none-eabi-g++ -mcpu=cortex-m3 -mthumb -E -x c++ - -v </dev/null 2>&1 |
        sed -n '/#include <...> search starts here:/,/End of search list./p' | sed '1d;$d')
    # -Oz instead of -Os, and enums as newlib's ABI has them.
    clang_flags=()
    for f in "${flags[@]}"; do
      case "$f" in -Os | -mthumb | -Wno-psabi) ;; *) clang_flags+=("$f") ;; esac
    done
    clang++-16 --target=thumbv7m-none-eabi -mfloat-abi=soft -fshort-enums -Oz "${clang_flags[@]}" "$@" \
      -nostdinc++ "${includes[@]}" -I"$root/include" -idirafter /usr/include -c "$source" -o "$obj"
    link_flags=() ;;
  *) echo "firmware.sh: unknown toolchain '$toolchain' (gcc, gcc-lto or clang)" >&2; exit 2 ;;
esac
if (( probe )); then
  # No startup code: the probe's function is the entry, and the linker keeps what it reaches.
  link_flags+=(-Wl,-e,relaxvm_size_probe -Wl,--defsym=__dso_handle=0 -Wl,--defsym=end=__heap_start)
else
  # Newlib's allocation entry points are wrapped: the example counts every call (board.hpp).
  link_flags+=(-Wl,--wrap=_malloc_r,--wrap=_calloc_r,--wrap=_realloc_r,--wrap=_memalign_r)
fi
arm-none-eabi-g++ "${cpu_flags[@]}" -mthumb "${link_flags[@]}" "$obj" -T "$root/examples/firmware/mps2_an385.ld" \
  -nostartfiles --specs=nosys.specs -Wl,--gc-sections -Wl,--no-enum-size-warning -Wl,-Map="$out/$name.map" \
  -o "$out/$name.elf"
(( probe )) && exit 0
exec timeout 300 qemu-system-arm -M "$machine" "${icount[@]}" -nographic -semihosting -kernel "$out/$name.elf"

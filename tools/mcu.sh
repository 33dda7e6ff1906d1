#!/usr/bin/env bash
# A model on a microcontroller, under QEMU: `relaxvm cpp` writes the model as a compile-time
# program (docs/firmware.md), tools/firmware.sh builds examples/firmware/model.cpp around it
# (arm-none-eabi-g++ -Os, firmware mode: no heap, no exceptions, no RTTI) and runs it.
#
#   tools/mcu.sh run MODEL.onnx IN.npy -o OUT.npy [--cpu cortex-m3|cortex-m4] [--work DIR]
#   tools/mcu.sh size MODEL.onnx [--cpu cortex-m3|cortex-m4] [--work DIR]
#
# run: the model on IN.npy (float32, the model's input shape), its output written to OUT.npy;
# fails unless the image made no heap allocation from reset on. size: the image built with
# terse errors (RELAXVM_ERROR_TEXT=0) and run once on zeros under -icount; prints flash
# (relaxvm's own code, the kernels, the weights, the rest), RAM (arena, frames, objects, and the
# stack: the worst case -fstack-usage gives along the calls, and what the run used) and the
# instructions one inference took (tools/mcu_size.py). --cpu: cortex-m3 (MPS2 AN385, soft
# float; the default) or cortex-m4 (AN386, its FPU). The relaxvm tool is $RELAXVM, else
# build/cli/relaxvm. --work keeps the generated header, the image and its map in DIR.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
usage() { sed -n '6,7p' "$0" | sed 's/^# *//' >&2; exit 2; }
(( $# >= 2 )) || usage
mode="$1" model="$2"
shift 2
input="" output="" cpu=cortex-m3 work=""
if [[ "$mode" == run ]]; then
  (( $# >= 1 )) || usage
  input="$1"
  shift
elif [[ "$mode" != size ]]; then
  usage
fi
while (( $# )); do
  case "$1" in
    -o) output="${2:?-o needs a file}"; shift 2 ;;
    --cpu) cpu="${2:?--cpu needs cortex-m3 or cortex-m4}"; shift 2 ;;
    --work) work="${2:?--work needs a directory}"; shift 2 ;;
    *) usage ;;
  esac
done
[[ "$mode" == size || -n "$output" ]] || usage
relaxvm="${RELAXVM:-$root/build/cli/relaxvm}"
[[ -x "$relaxvm" ]] || { echo "mcu.sh: no relaxvm tool at $relaxvm (build it, or set RELAXVM)" >&2; exit 2; }
if [[ -z "$work" ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
"$relaxvm" cpp "$model" --name model -o "$work/model.hpp" >/dev/null
rm -f "$work/out.npy" "$work/in.npy"
if [[ "$mode" == run ]]; then
  cp "$input" "$work/in.npy"
  if ! (cd "$work" && "$root/tools/firmware.sh" --cpu "$cpu" "$work" model gcc "-I$work") > "$work/run.log" 2>&1; then
    cat "$work/run.log" >&2
    exit 1
  fi
  grep -q '^heap allocations: 0$' "$work/run.log" || { cat "$work/run.log" >&2; exit 1; }
  cp "$work/out.npy" "$output"
  grep -E '^memory:' "$work/run.log" || true
else
  exec "${PYTHON:-python3}" "$root/tools/mcu_size.py" "$work" "$cpu"
fi

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Size report for Cortex-M3 (thumb, -Os, firmware mode RELAXVM_HEAP=0).

usage: size_report.py [--out DIR] [--max-text BYTES]

Builds tools/size/probe.cpp (static_vm linked at compile time against every builtin of the shape
and memory tables) twice, with full error messages and with terse ones (RELAXVM_ERROR_TEXT=0),
links each with --gc-sections, and prints the bytes of .text, .rodata, .data and .bss that belong
to relaxvm (symbols in namespace relaxvm, from nm) and those of the whole image (with newlib and
libstdc++). Then it builds and runs the two firmware examples (tools/firmware.sh: main.cpp, the
network written as bytecode, and ir.cpp, the same network written as IR and lowered at compile
time) and prints relaxvm's bytes in each and the RAM each uses. Exits with 1 when relaxvm's .text with terse errors is above --max-text."""

import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def relaxvm_sizes(elf):
    """Bytes of relaxvm's own symbols, by the section they are in (nm's System V format says)."""
    sizes = {".text": 0, ".rodata": 0, ".data": 0, ".bss": 0}
    seen = set()  # aliases (a constructor's C1 and C2 names) share an address: count it once
    for line in run(["arm-none-eabi-nm", "-C", "-S", "--format=sysv", elf]).splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 7 and "relaxvm" in fields[0] and fields[4] and fields[6] in sizes:
            if fields[1] not in seen:
                seen.add(fields[1])
                sizes[fields[6]] += int(fields[4], 16)
    return sizes


def image_sizes(elf):
    sizes = {}
    for line in run(["arm-none-eabi-size", "-A", elf]).splitlines():
        m = re.match(r"^(\.text|\.rodata|\.data|\.bss)\s+(\d+)", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
    return sizes


def measure(stem, flags):
    """Builds the probe with `flags`, links it with --gc-sections; (relaxvm's sizes, the image's)."""
    obj, elf = stem.with_suffix(".o"), stem.with_suffix(".elf")
    run(["arm-none-eabi-g++", *flags, f"-I{ROOT / 'include'}", "-idirafter", "/usr/include", "-c",
         str(ROOT / "tools" / "size" / "probe.cpp"), "-o", str(obj)])
    # The probe's entry point keeps everything it reaches; nothing else is kept.
    run(["arm-none-eabi-g++", "-mcpu=cortex-m3", "-mthumb", str(obj), "-T",
         str(ROOT / "examples" / "firmware" / "mps2_an385.ld"), "-nostartfiles", "--specs=nosys.specs",
         "-Wl,--gc-sections", "-Wl,-e,relaxvm_size_probe", "-Wl,--defsym=__dso_handle=0",
         "-Wl,--defsym=end=__heap_start", "-o", str(elf)])
    return relaxvm_sizes(str(elf)), image_sizes(str(elf))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "build-firmware"))
    ap.add_argument("--max-text", type=int, default=None)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    flags = (ROOT / "tools" / "firmware_flags.txt").read_text().split()
    full = measure(out / "size_probe", flags)
    terse = measure(out / "size_probe_terse", [*flags, "-DRELAXVM_ERROR_TEXT=0"])
    print("Cortex-M3, arm-none-eabi-g++ -Os, RELAXVM_HEAP=0: static_vm + the shape and memory builtins")
    print("(relaxvm: its own symbols; image: with newlib and libstdc++; terse: RELAXVM_ERROR_TEXT=0)")
    print(f"{'section':10} {'relaxvm':>9} {'terse':>9} {'image':>9} {'terse':>9}")
    for s in (".text", ".rodata", ".data", ".bss"):
        print(f"{s:10} {full[0][s]:>9} {terse[0][s]:>9} {full[1].get(s, 0):>9} {terse[1].get(s, 0):>9}")
    failed = False
    print("The firmware examples (examples/firmware, full messages): relaxvm's own bytes and the RAM they use")
    for example, what in (("main", "written as bytecode"), ("ir", "written as IR, lowered at compile time")):
        firmware = subprocess.run([str(ROOT / "tools" / "firmware.sh"), str(out), example], capture_output=True, text=True)
        output = firmware.stdout + firmware.stderr  # QEMU writes semihosting output to stderr
        ram = [l for l in output.splitlines() if l.startswith("memory:")]
        if firmware.returncode != 0 or not ram:
            print(f"{example}.cpp failed: {output}")
            failed = True
            continue
        own = relaxvm_sizes(str(out / f"{example}.elf"))
        print(f"  {example}.cpp ({what}): .text {own['.text']} B, .rodata {own['.rodata']} B; "
              f"{ram[0][len('memory: '):]}")
    if failed:
        return 1
    if args.max_text is not None and terse[0][".text"] > args.max_text:
        print(f"relaxvm's .text (terse errors) is {terse[0]['.text']} bytes, above the limit of {args.max_text}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs tests/unit/kernels_firmware.cpp's two builds, firmware mode and hosted, and requires the
same cases with equal outputs within float tolerance (|a - b| <= 1e-5 + 1e-5 |b|) and the same
error messages.

usage: compare_kernels.py FIRMWARE_EXE HOSTED_EXE"""

import subprocess
import sys


def run(exe):
    r = subprocess.run([exe], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{exe} failed ({r.returncode}):\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout.splitlines()


def main():
    firmware, hosted = run(sys.argv[1]), run(sys.argv[2])
    if len(firmware) != len(hosted) or not firmware:
        sys.exit(f"firmware mode printed {len(firmware)} lines, hosted {len(hosted)}")
    bad = 0
    for f, h in zip(firmware, hosted):
        fw, hw = f.split(), h.split()
        if fw[0] != hw[0]:
            sys.exit(f"the cases differ: firmware mode's {fw[0]}, hosted {hw[0]}")
        if fw[1] == "error" or hw[1] == "error":
            if f != h:
                print(f"{fw[0]}: the errors differ:\n  firmware: {f}\n  hosted:   {h}")
                bad += 1
            continue
        n = int(fw[1])
        if n != int(hw[1]) or len(fw) != n + 2 or len(hw) != n + 2:
            print(f"{fw[0]}: {fw[1]} elements in firmware mode, {hw[1]} hosted")
            bad += 1
            continue
        for i, (a, b) in enumerate(zip(map(float, fw[2:]), map(float, hw[2:]))):
            if not abs(a - b) <= 1e-5 + 1e-5 * abs(b):
                print(f"{fw[0]}: element {i}: firmware mode {a!r}, hosted {b!r}")
                bad += 1
                break
    print(f"{len(firmware)} outputs compared, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

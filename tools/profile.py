#!/usr/bin/env python3
"""Counts the instructions each dispatch-benchmark case runs per operation, with callgrind.

    tools/profile.py [CASE ...]      # cases of bench/dispatch.cpp: int tensor invoke static graph

Builds build-release (as tools/bench.sh), runs `bench_dispatch --only CASE N` under
`valgrind --tool=callgrind` for two values of N, and divides the difference by the extra
operations, so set-up cost cancels out. Prints the total per operation and the functions it
goes to. Unlike times, these counts repeat exactly from run to run.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "build-release", "bench", "bench_dispatch")
OPS_PER_RUN = 1000  # every case's body is 1,000 operations
RUNS = (100, 200)


def function_counts(out_file):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out_file],
                          capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if m:
            name = re.sub(r"^\?\?\?:", "", m.group(2))
            name = re.sub(r" \[[^\]]*\]$", "", name)  # the object file
            counts[name] = counts.get(name, 0) + int(m.group(1).replace(",", ""))
    return counts


def profile(case):
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in RUNS:
            out = os.path.join(tmp, f"callgrind.{n}")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", BENCH,
                            "--only", case, str(n)], capture_output=True, check=True)
            runs.append(function_counts(out))
    ops = (RUNS[1] - RUNS[0]) * OPS_PER_RUN
    per_op = {k: (runs[1].get(k, 0) - runs[0].get(k, 0)) / ops for k in set(runs[0]) | set(runs[1])}
    total = per_op.pop("PROGRAM TOTALS")
    print(f"{case}: {total:.1f} instructions per operation")
    for name, n in sorted(per_op.items(), key=lambda kv: -kv[1]):
        if n >= 0.5:
            print(f"  {n:6.1f}  {name[:110]}")


def main():
    cases = sys.argv[1:] or ["int", "tensor", "invoke", "static", "graph"]
    subprocess.run([os.path.join(ROOT, "tools", "setup.sh")], check=True)
    if not os.path.isdir(os.path.join(ROOT, "build-release")):
        subprocess.run(["meson", "setup", "build-release", "--buildtype=release", "-Dtests=false"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", "build-release", "bench/bench_dispatch"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    for case in cases:
        profile(case)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Counts the instructions each dispatch-benchmark case runs per operation, with callgrind.

    tools/profile.py [CASE ...]      # cases of bench/dispatch.cpp: int tensor invoke static graph
    tools/profile.py mlp:WAY:N       # one run of bench/mlp.cpp's MLP at batch size N, WAY one of
                                     # direct, hand, ir, static: the total and, inclusive, each
                                     # builtin (or its prepared version) and kernel it calls

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


def inclusive_counts(out_file):
    """Per function, the instructions it and its callees ran (callgrind_annotate --inclusive)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=yes", out_file],
                          capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if m and "=>" not in m.group(2):  # call-site lines repeat their callee's cost
            name = re.sub(r"^[^:]*\.[ch]pp:|^\?\?\?:", "", m.group(2))
            name = re.sub(r" \[[^\]]*\]$", "", name)
            counts[name] = max(counts.get(name, 0), int(m.group(1).replace(",", "")))
    return counts


def profile_mlp(case):
    _, way, n = case.split(":")
    bench = os.path.join(ROOT, "build-release", "bench", "bench_mlp")
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in RUNS:
            out = os.path.join(tmp, f"callgrind.{count}")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", bench,
                            "--only", way, n, str(count)], capture_output=True, check=True)
            runs.append(inclusive_counts(out))
    calls = RUNS[1] - RUNS[0]
    per_call = {k: (runs[1].get(k, 0) - runs[0].get(k, 0)) / calls for k in set(runs[0]) | set(runs[1])}
    print(f"{case}: {per_call.get('PROGRAM TOTALS', 0):.0f} instructions per call; inclusive, per call:")
    for name, count in sorted(per_call.items(), key=lambda kv: -kv[1]):
        short = re.sub(r"\(.*$", "", name)
        # A builtin's prepared version (vm_options::prepare_calls) counts under its name; it calls
        # the general function only for what it does not serve.
        prepared = re.match(r"relaxvm::builtins::detail::([a-z_]+)_prepared$", short)
        if prepared:
            short = f"relaxvm::builtins::{prepared.group(1)} (prepared)"
        if count >= 50 and (prepared or re.match(r"relaxvm::(builtins|ops)::[a-z_]+$", short)):
            print(f"  {count:8.0f}  {short}")


def main():
    cases = sys.argv[1:] or ["int", "tensor", "invoke", "static", "graph"]
    subprocess.run([os.path.join(ROOT, "tools", "setup.sh")], check=True)
    if not os.path.isdir(os.path.join(ROOT, "build-release")):
        subprocess.run(["meson", "setup", "build-release", "--buildtype=release", "-Dtests=false"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", "build-release", "bench/bench_dispatch", "bench/bench_mlp"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    for case in cases:
        if case.startswith("mlp:"):
            profile_mlp(case)
        else:
            profile(case)


if __name__ == "__main__":
    main()

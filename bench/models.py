#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Whole models, relaxvm against torch, side by side in one run (issue 35): one thread, batch 1.

    /usr/bin/python3 bench/models.py [--relaxvm build-release/cli/relaxvm] [--dir DIR]
        [--rounds R] [--runs N] [--warmup W] [--only NAME ...] [--profile] [--quick]

Exports the models with tools/export_models.py into DIR (once; later runs reuse the files), then
for each model alternates, R rounds: torch (torch.set_num_threads(1), eval, no_grad, warmed) for N
runs, then relaxvm's CLI `relaxvm time MODEL.onnx INPUT.npy --runs N --warmup W` (the VM built
from the ONNX file, the input from the .npy torch's export wrote). Each side's figure is the
median over the rounds of each round's median; the ratio is relaxvm's over torch's. Prints the
machine, the date and the command first. With --profile, where relaxvm's time goes per model:
`relaxvm time --profile --format csv` (the VM profiler, include/relaxvm/profiler.hpp, timing
every Call), aggregated per callee.

Without torch (or torchvision, onnx) it prints why and exits 77 (meson's "skipped"). The budgets
are issue 35's: ResNet18 and MobileNetV2 at most 1.5x torch, the MLP, the DS-CNN and the
transformer encoder at most 1.0x; a model over its budget is marked, the exit status is 0 either
way (a benchmark, not a test: the machine decides).
"""
import argparse
import csv
import datetime
import io
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name, input shape, budget (relaxvm / torch)
MODELS = [
    ("mlp", (1, 784), 1.0),
    ("dscnn", (1, 1, 49, 10), 1.0),
    ("transformer", (1, 16, 64), 1.0),
    ("resnet18", (1, 3, 224, 224), 1.5),
    ("mobilenet_v2", (1, 3, 224, 224), 1.5),
]


def machine():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def torch_model(em, name):
    """The same module export_models.py exports (same seed, calibrated, eval)."""
    import torch
    if name == "mlp":
        cls = em.MLP
    elif name == "dscnn":
        cls = em.DSCNN
    elif name == "transformer":
        cls = em.Encoder
    else:
        import torchvision.models as tvm
        ctor = getattr(tvm, name)
        cls = lambda: ctor(weights=None)  # noqa: E731
    shape = dict((n, s) for n, s, _ in MODELS)[name]
    torch.manual_seed(0)
    m = cls()
    em.calibrate(m, shape)
    return m.eval()


def ensure_exported(em, name, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if not (os.path.exists(path) and os.path.exists(os.path.join(out_dir, name + ".input.npy"))):
        shape = dict((n, s) for n, s, _ in MODELS)[name]
        em.export(name, torch_model(em, name), shape, out_dir, grad=(name == "transformer"))
    return path


def time_torch(model, x, runs, warmup):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def relaxvm_cmd(tool, model, inp, runs, warmup, extra=()):
    return [tool, "time", model, inp, "--runs", str(runs), "--warmup", str(warmup), "--max-instructions", "100000000",
            *extra]


def time_relaxvm(tool, model, inp, runs, warmup):
    out = subprocess.run(relaxvm_cmd(tool, model, inp, runs, warmup), check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([0-9.]+) us", out)
    if not m:
        raise RuntimeError(f"unexpected output of relaxvm time: {out!r}")
    return float(m.group(1)) / 1e3


def profile(tool, model, inp, runs):
    """Per callee: calls per run, ms per run, share; the run's total (ms)."""
    out = subprocess.run(relaxvm_cmd(tool, model, inp, runs, 1, ("--profile", "--format", "csv")), check=True,
                         capture_output=True, text=True).stdout
    body = out[out.index("callee,kind"):]
    rows = []
    for r in csv.DictReader(io.StringIO(body)):
        rows.append((r["callee"], int(r["calls"]) / runs, float(r["total_us"]) / runs / 1e3, float(r["percent"])))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--relaxvm", default=os.path.join(ROOT, "build-release", "cli", "relaxvm"), help="the relaxvm tool")
    p.add_argument("--dir", default=os.path.join(ROOT, "build-release", "bench-models"), help="where the models go")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=0, help="timed runs per side and round (default: by model size)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--profile", action="store_true", help="also where relaxvm's time goes, per callee")
    p.add_argument("--quick", action="store_true", help="one round of few runs (proves the script works)")
    args = p.parse_args()
    try:
        import torch
        import torchvision  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print(f"bench/models.py: skipped ({e}; needs python3-torch, python3-torchvision, python3-onnx)")
        return 77
    if not os.access(args.relaxvm, os.X_OK):
        print(f"bench/models.py: {args.relaxvm} is not built (meson's -Dtool=true builds it)", file=sys.stderr)
        return 1
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import export_models as em
    torch.set_num_threads(1)
    os.makedirs(args.dir, exist_ok=True)
    names = [n for n, _, _ in MODELS if args.only is None or n in args.only]

    print(f"machine: {machine()}")
    print(f"date: {datetime.datetime.now().isoformat(timespec='seconds')}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread")
    print(f"command: {' '.join([sys.executable] + sys.argv)}")
    print(f"relaxvm: {args.relaxvm}")
    print(f"kernels: RELAXVM_KERNEL_ISA={os.environ.get('RELAXVM_KERNEL_ISA', '(unset: the widest copy the CPU runs)')}")
    print()
    results = []
    for name in names:
        path = ensure_exported(em, name, args.dir)
        inp = os.path.join(args.dir, name + ".input.npy")
        import numpy as np
        x = torch.from_numpy(np.load(inp))
        model = torch_model(em, name)
        big = name in ("resnet18", "mobilenet_v2")
        runs = args.runs or (20 if big else 500)
        rounds = args.rounds
        if args.quick:
            runs, rounds = (2 if big else 20), 1
        tt, rt = [], []
        for _ in range(rounds):
            tt.append(time_torch(model, x, runs, args.warmup))
            rt.append(time_relaxvm(args.relaxvm, path, inp, runs, args.warmup))
        budget = dict((n, b) for n, _, b in MODELS)[name]
        results.append((name, statistics.median(tt), statistics.median(rt), budget, runs, rounds))

    print(f"{'model':14} {'torch ms':>10} {'relaxvm ms':>11} {'ratio':>7} {'budget':>7}   runs x rounds")
    for name, t, r, budget, runs, rounds in results:
        mark = "" if r / t <= budget else "  over"
        print(f"{name:14} {t:10.3f} {r:11.3f} {r / t:7.2f} {budget:7.1f}{mark:6} {runs} x {rounds}")

    if args.profile:
        for name in names:
            path = os.path.join(args.dir, name + ".onnx")
            inp = os.path.join(args.dir, name + ".input.npy")
            runs = 2 if args.quick else (5 if name in ("resnet18", "mobilenet_v2") else 200)
            rows = profile(args.relaxvm, path, inp, runs)
            print(f"\n{name}: where relaxvm's time goes ({runs} profiled runs; times include the profiler's clock reads)")
            print(f"  {'callee':40} {'calls':>6} {'ms/run':>9} {'share':>7}")
            for callee, calls, ms, pct in rows:
                print(f"  {callee:40} {calls:6.0f} {ms:9.4f} {pct:6.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The fixture models on Cortex-M under QEMU, against the host.

usage: mcu_models.py RELAXVM OUT_DIR

For the DS-CNN and the MLP of tests/fixtures/onnx, on the Cortex-M3 (MPS2 AN385, soft float) and
the Cortex-M4 (AN386, its FPU): tools/mcu.sh run builds the image around the model's `relaxvm cpp`
header (one build per CPU per model) and runs it on the fixture's input under QEMU; it fails when
the image made a heap allocation from reset on. Each output must equal the tool's run of the same
model on the host (`relaxvm run`: onnx::load and the VM) within 1e-5. And relaxvm's own flash
(`tools/mcu.sh size MODEL --cpu cortex-m3`: the interpreter, builtins and kernel glue, with terse
errors) must stay within FLASH_GATE bytes for each model (issue 36: 8 KiB). Two at a time. Exits
77 (meson's skip) without arm-none-eabi-g++ or qemu-system-arm."""

import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cli"))
from model_check import read_npy_f32  # noqa: E402

MODELS = ["dscnn", "mlp"]
CPUS = ["cortex-m3", "cortex-m4"]
FLASH_GATE = 8192  # relaxvm's own flash on the Cortex-M3, terse errors (issue 36)


def on_mcu(tool, out, model, cpu):
    fixtures = ROOT / "tests" / "fixtures" / "onnx"
    work = out / f"{model}-{cpu}"
    result = work / "out.result.npy"
    r = subprocess.run([str(ROOT / "tools" / "mcu.sh"), "run", str(fixtures / f"{model}.onnx"), str(fixtures / f"{model}.input.npy"),
                        "-o", str(result), "--cpu", cpu, "--work", str(work)],
                       capture_output=True, text=True, env={**os.environ, "RELAXVM": tool})
    if r.returncode != 0:
        return None, f"tools/mcu.sh run failed:\n{r.stdout}{r.stderr}"
    return read_npy_f32(result), (work / "run.log").read_text()


def own_flash(tool, out, model):
    """relaxvm's own flash in the model's Cortex-M3 image (tools/mcu.sh size), or None and why."""
    fixtures = ROOT / "tests" / "fixtures" / "onnx"
    r = subprocess.run([str(ROOT / "tools" / "mcu.sh"), "size", str(fixtures / f"{model}.onnx"), "--cpu", "cortex-m3",
                        "--work", str(out / f"{model}-size")],
                       capture_output=True, text=True, env={**os.environ, "RELAXVM": tool})
    m = re.search(r"relaxvm \(interpreter, builtins, kernel glue\)\s+(\d+)", r.stdout)
    if r.returncode != 0 or not m:
        return None, f"tools/mcu.sh size failed:\n{r.stdout}{r.stderr}"
    return int(m.group(1)), r.stdout


def main():
    if shutil.which("arm-none-eabi-g++") is None or shutil.which("qemu-system-arm") is None:
        print("arm-none-eabi-g++ or qemu-system-arm is missing (tools/setup.sh installs them): skipped")
        return 77
    tool, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    fixtures = ROOT / "tests" / "fixtures" / "onnx"
    failures = []
    jobs = [(m, c) for m in MODELS for c in CPUS]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        sizes = [pool.submit(own_flash, tool, out, m) for m in MODELS]
        results = list(pool.map(lambda j: on_mcu(tool, out, *j), jobs))
        sizes = [f.result() for f in sizes]
    for model, (flash, log) in zip(MODELS, sizes):
        if flash is None:
            failures.append(f"{model}: {log}")
            continue
        print(f"{model} on cortex-m3: relaxvm's own flash {flash} B (gate {FLASH_GATE} B)")
        if flash > FLASH_GATE:
            failures.append(f"{model}: relaxvm's own flash is {flash} B on the Cortex-M3, above its gate of {FLASH_GATE} B:\n{log}")
    for (model, cpu), (got, log) in zip(jobs, results):
        if got is None:
            failures.append(f"{model} on {cpu}: {log}")
            continue
        host = out / f"{model}.host.npy"
        r = subprocess.run([tool, "run", str(fixtures / f"{model}.onnx"), str(fixtures / f"{model}.input.npy"), "-o", str(host)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{model}: relaxvm run failed:\n{r.stdout}{r.stderr}")
            continue
        want = read_npy_f32(host)
        worst = max((abs(g - w) / max(1.0, abs(w)) for g, w in zip(got, want)), default=0.0)
        memory = [l for l in log.splitlines() if l.startswith("memory:")]
        print(f"{model} on {cpu}: {len(got)} outputs, largest difference from the host {worst:.3g}; "
              f"{memory[0] if memory else ''}; no heap allocation")
        if len(got) != len(want) or worst > 1e-5:
            failures.append(f"{model} on {cpu}: {len(got)} outputs (host {len(want)}), largest difference {worst:.3g} (more than 1e-5)")
    if failures:
        print("FAILED:\n" + "\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

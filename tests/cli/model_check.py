#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A model header of `relaxvm cpp` against the tool's own run of the same model.

usage: model_check.py RELAXVM CHECK MODEL.onnx IN.npy

CHECK is tests/cli/model_check.cpp built around the header `relaxvm cpp MODEL.onnx --name NAME`
wrote (firmware mode, on the host); it prints each output element. `relaxvm run MODEL.onnx IN.npy
-o OUT.npy` runs the model with onnx::load and the VM. Every element must agree within 1e-5
(relative to the larger of 1 and the element's size)."""

import pathlib
import struct
import subprocess
import sys
import tempfile


def read_npy_f32(path):
    data = pathlib.Path(path).read_bytes()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"{path}: not an .npy file")
    if data[6] == 1:
        start = 10 + struct.unpack_from("<H", data, 8)[0]
    else:
        start = 12 + struct.unpack_from("<I", data, 8)[0]
    header = data[:start].decode("latin1")
    if "'<f4'" not in header or "'fortran_order': False" not in header:
        raise SystemExit(f"{path}: not a little-endian float32 array in C order: {header!r}")
    n = (len(data) - start) // 4
    return list(struct.unpack_from(f"<{n}f", data, start))


def main():
    tool, check, model, inp = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        host_npy = pathlib.Path(tmp) / "host.npy"
        r = subprocess.run([tool, "run", model, inp, "-o", str(host_npy)], capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"relaxvm run failed:\n{r.stdout}{r.stderr}")
        want = read_npy_f32(host_npy)
    r = subprocess.run([check, inp], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        raise SystemExit(f"{check} failed ({r.returncode}):\n{r.stderr}")
    lines = r.stdout.splitlines()
    got = [float(l) for l in lines if not l.startswith("arena")]
    if len(got) != len(want):
        raise SystemExit(f"{len(got)} output elements, the tool's run has {len(want)}")
    worst = max((abs(g - w) / max(1.0, abs(w)) for g, w in zip(got, want)), default=0.0)
    print(f"{len(got)} elements, largest difference {worst:.3g}")
    if worst > 1e-5:
        raise SystemExit(f"FAILED: the header's run differs from the tool's by {worst:.3g} (more than 1e-5)")


if __name__ == "__main__":
    main()

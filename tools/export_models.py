#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the model architectures relaxvm is checked against from PyTorch to ONNX, with random
weights, an input and torch's own output for each (as serialized TensorProtos, .pb, the format of
ONNX's backend test data).

    /usr/bin/python3 tools/export_models.py OUT_DIR [--small | --all] [--only NAME ...]

--small (the default) writes the models under 1 MB that tests/fixtures/onnx keeps (MLP, LeNet,
DS-CNN keyword spotting, a d=64 transformer encoder layer: static, with a dynamic batch axis, and at
opset 17; a gate scripted with data-dependent control flow, exported as an If); --all adds ResNet18, MobileNetV2 and SqueezeNet 1.1 (tens of MB: the benchmarks export
them when torch is installed). Needs Debian's python3-torch, python3-torchvision and python3-onnx
(only here: CI and the tests use the files this writes). Seeded: the same torch writes the same files.

Two things real exports need (../shared/reference/onnx.md): BatchNorm layers get real running
statistics first (8 random batches in training mode), or MobileNetV2's outputs are ~1e-9 and any
tolerance passes; and the transformer is exported with gradients enabled, because torch 1.13's
fused inference path (_transformer_encoder_layer_fwd) has no ONNX export.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                                        nn.Linear(84, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class DSCNN(nn.Module):
    """Keyword spotting, Hello Edge's DS-CNN: input 1x1x49x10 (MFCC), 64 channels, 4 blocks."""

    def __init__(self, channels=64, blocks=4, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, channels, (10, 4), stride=2, padding=(5, 1)), nn.BatchNorm2d(channels), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, groups=channels), nn.BatchNorm2d(channels), nn.ReLU(),
                       nn.Conv2d(channels, channels, 1), nn.BatchNorm2d(channels), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class Gate(nn.Module):
    """Data-dependent control flow: scripted (torch.jit.script), the `if` is exported as an If whose
    branches read the layer's output, which is read again after it, and give outputs of different
    shapes ((1, 8) and (2, 8))."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        if bool(x.sum() > 0):
            y = torch.relu(h) * 2.0
        else:
            y = torch.cat([h, h], 0) - 1.0
        return y + h.mean()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=64, nhead=2, dim_feedforward=128, dropout=0.0,
                                                activation="gelu", batch_first=True)

    def forward(self, x):
        return self.layer(x)


def calibrate(model, shape):
    """Gives every BatchNorm real running statistics."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average
    model.train()
    with torch.no_grad():
        for _ in range(8):
            model(torch.randn(8, *shape[1:]))
    model.eval()


def save_pb(array, path):
    """Writes `array` as a TensorProto (.pb) and, beside it, as .npy (what the command-line tool reads)."""
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())
    np.save(path[: -len(".pb")] + ".npy", np.ascontiguousarray(array))


def export(name, model, shape, out_dir, opset=13, dynamic_batch=False, grad=False, suffix="", negated=False):
    torch.manual_seed(0)
    x = torch.randn(*shape)
    path = os.path.join(out_dir, name + suffix + ".onnx")
    kwargs = {}
    if dynamic_batch:
        kwargs["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
    ctx = torch.enable_grad() if grad else torch.no_grad()
    with ctx:
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                          do_constant_folding=True, **kwargs)
    with torch.no_grad():
        y = model(x)
    save_pb(x.numpy(), os.path.join(out_dir, name + suffix + ".input.pb"))
    save_pb(y.numpy(), os.path.join(out_dir, name + suffix + ".output.pb"))
    if dynamic_batch:  # a second batch size from the same file
        xb = torch.randn(5, *shape[1:])
        with torch.no_grad():
            yb = model(xb)
        save_pb(xb.numpy(), os.path.join(out_dir, name + suffix + ".batch5.input.pb"))
        save_pb(yb.numpy(), os.path.join(out_dir, name + suffix + ".batch5.output.pb"))
    if negated:  # -x as a second input (the other side of a data-dependent branch)
        with torch.no_grad():
            yn = model(-x)
        save_pb((-x).numpy(), os.path.join(out_dir, name + suffix + ".neg.input.pb"))
        save_pb(yn.numpy(), os.path.join(out_dir, name + suffix + ".neg.output.pb"))
    onnx.checker.check_model(onnx.load(path))
    print(f"{path}: {os.path.getsize(path)} bytes, output {tuple(y.shape)} max |y| {float(y.abs().max()):.3g}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--all", action="store_true", help="also the large torchvision models")
    p.add_argument("--only", nargs="*", default=None)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(1)

    def want(n):
        return args.only is None or n in args.only

    def make(cls, shape):
        torch.manual_seed(0)
        m = cls()
        calibrate(m, shape)
        return m.eval()

    if want("mlp"):
        export("mlp", make(MLP, (1, 784)), (1, 784), args.out_dir)
        export("mlp", make(MLP, (1, 784)), (1, 784), args.out_dir, dynamic_batch=True, suffix=".dynbatch")
    if want("lenet"):
        export("lenet", make(LeNet, (1, 1, 28, 28)), (1, 1, 28, 28), args.out_dir)
    if want("dscnn"):
        export("dscnn", make(DSCNN, (1, 1, 49, 10)), (1, 1, 49, 10), args.out_dir)
    if want("transformer"):
        enc = make(Encoder, (1, 16, 64))
        export("transformer", enc, (1, 16, 64), args.out_dir, grad=True)
        export("transformer", enc, (1, 16, 64), args.out_dir, grad=True, dynamic_batch=True, suffix=".dynbatch")
        export("transformer", enc, (1, 16, 64), args.out_dir, grad=True, opset=17, suffix=".opset17")
    if want("gate"):
        export("gate", torch.jit.script(make(Gate, (1, 8))), (1, 8), args.out_dir, negated=True)
    if args.all:
        import torchvision.models as tvm
        for name, ctor in (("resnet18", tvm.resnet18), ("mobilenet_v2", tvm.mobilenet_v2), ("squeezenet1_1", tvm.squeezenet1_1)):
            if want(name):
                export(name, make(lambda: ctor(weights=None), (1, 3, 224, 224)), (1, 3, 224, 224), args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

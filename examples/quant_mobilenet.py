"""A small MobileNetV2-style net on Fashion-MNIST: float vs mnn int8 PTQ (each method) vs mnn QAT, with PyTorch
eager-mode PTQ/QAT and ONNX Runtime's quantize_static as peers, all from the same float weights and data.

    apt-get install -y dataset-fashion-mnist
    python examples/quant_mobilenet.py --epochs 2 --qat-steps 300     # the table in benchmarks/RESULTS_QUANT.md
    python examples/quant_mobilenet.py --epochs 1 --train-limit 5000 --qat-steps 20 --test-limit 1000  # quick look

Inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project, BatchNorm, ReLU6, residual adds), so this
exercises what LeNet does not: batch norms folded into convolutions, ReLU6 folded into the int8 output range,
depthwise int8 convolutions, residual adds (QLinearAdd) and a float global pool between int8 layers.

The architecture is written once (`mobilenet`) and built both with mnn_core.nn and with torch.nn (same names,
same state_dict keys). The float net is trained with PyTorch (fast on a CPU), its weights are loaded into the
mnn model (checked against PyTorch's outputs), and every row starts from them. The fine-tuning runs (mnn QAT,
PyTorch QAT and the float baseline QAT is measured against) see the same --qat-steps batches of 64 with the
same optimizer (examples/_quant_common.py).
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time

import numpy as np
from _quant_common import (
    accuracy_mnn,
    accuracy_ort,
    accuracy_torch,
    finetune_float,
    load_fashion_mnist,
    ort_quantize,
    print_table,
    qat_mnn,
    torch_eager_quant,
    torch_size,
    train_torch_epochs,
)

import mnn_core as mnn
from mnn_core import data, quant
from mnn_core import nn as mnn_nn
from mnn_core.errors import MnnError
from mnn_core.format import save_mnn
from mnn_core.quant.ptq import prepare_float

INPUT_SHAPE = (1, 1, 28, 28)


def mobilenet(nn, torch=None):
    """The net built with `nn` (mnn_core.nn or torch.nn): stem conv, 5 inverted residual blocks, 1x1 conv,
    global average pool, linear.

    With `torch`, the PyTorch eager-mode quantization hooks are in place: QuantStub/DeQuantStub around the net
    and a FloatFunctional for each residual add. They compute nothing (identities, torch.add) until
    torch.ao.quantization prepares the model, and hold no state, so the float state_dicts of both builds match.
    """

    def cbr(cin, cout, k, stride=1, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return layers + [nn.ReLU6()] if act else layers

    class Block(nn.Module):
        def __init__(self, cin, cout, stride, expand=4):
            super().__init__()
            mid = cin * expand
            self.body = nn.Sequential(
                *cbr(cin, mid, 1), *cbr(mid, mid, 3, stride, groups=mid), *cbr(mid, cout, 1, act=False)
            )
            self.residual = stride == 1 and cin == cout
            if self.residual and torch is not None:
                self.add = torch.ao.nn.quantized.FloatFunctional()

        def forward(self, x):
            y = self.body(x)
            if not self.residual:
                return y
            return self.add.add(x, y) if torch is not None else x + y

    class MobileNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                *cbr(1, 16, 3),
                Block(16, 16, 1),
                Block(16, 24, 2),
                Block(24, 24, 1),
                Block(24, 32, 2),
                Block(32, 32, 1),
                *cbr(32, 64, 1),
            )
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.flatten = nn.Flatten()
            self.fc = nn.Linear(64, 10)
            if torch is not None:
                self.quant = torch.ao.quantization.QuantStub()
                self.dequant = torch.ao.quantization.DeQuantStub()

        def forward(self, x):
            if torch is not None:
                x = self.quant(x)
            x = self.fc(self.flatten(self.pool(self.features(x))))
            return self.dequant(x) if torch is not None else x

    return MobileNet()


def train_float(torch, xtr, ytr, epochs, seed=0):
    torch.manual_seed(seed)
    return train_torch_epochs(torch, mobilenet(torch.nn, torch), xtr, ytr, epochs, lr=0.05, seed=seed)


def mnn_from_torch(torch, tmodel, x, atol=1e-4):
    """The mnn model with the PyTorch float weights, checked to compute what PyTorch does on `x`."""
    model = mobilenet(mnn_nn)
    model.load_state_dict(tmodel.state_dict())
    model.eval()
    with torch.no_grad():
        want = tmodel(torch.from_numpy(x)).numpy()
    got = model(x).numpy()
    err = float(np.abs(got - want).max())
    print(f"  mnn vs PyTorch float logits on {len(x)} images: max |difference| {err:.2e}", flush=True)
    if err > atol * max(1.0, float(np.abs(want).max())):
        raise MnnError(f"the mnn model does not compute what the PyTorch one does (max |difference| {err:.3g})")
    return model


def fuse_groups(torch, model, relu: bool):
    """Names of the Conv2d, BatchNorm2d (and ReLU) runs eager mode fuses. nn.ReLU6 is not fusable there."""
    tnn, groups = torch.nn, []
    for name, seq in model.named_modules():
        if not isinstance(seq, tnn.Sequential):
            continue
        mods = list(seq)
        for i in range(len(mods) - 1):
            if isinstance(mods[i], tnn.Conv2d) and isinstance(mods[i + 1], tnn.BatchNorm2d):
                n = 3 if relu and i + 2 < len(mods) and isinstance(mods[i + 2], tnn.ReLU) else 2
                groups.append([f"{name}.{i + k}" for k in range(n)])
    return groups


def relu6_to_relu(torch, model):
    """The model with every ReLU6 replaced by ReLU (a copy), so that eager mode fuses conv + bn + relu: what
    torchvision's quantizable MobileNetV2 does. It is a different float model (activations above 6 pass)."""
    model = copy.deepcopy(model)
    for mod in model.modules():
        for name, child in mod.named_children():
            if isinstance(child, torch.nn.ReLU6):
                setattr(mod, name, torch.nn.ReLU())
    return model


def torch_peers(torch, float_model, xtr, ytr, xte, yte, calib, qat_steps, lr, relu: bool):
    """PyTorch eager-mode PTQ and QAT (x86 engine, default qconfigs) from the same float weights.

    relu=False keeps nn.ReLU6 as its own quantized module after each fused ConvBn2d (it reuses the conv's
    output scale); relu=True is the ReLU6 -> ReLU variant with fused ConvBnReLU2d."""
    fresh = relu6_to_relu(torch, float_model) if relu else copy.deepcopy(float_model)
    groups = fuse_groups(torch, fresh, relu)
    out = {"float": accuracy_torch(torch, fresh.eval(), xte, yte)}
    out.update(torch_eager_quant(torch, lambda: copy.deepcopy(fresh), groups, xtr, ytr, xte, yte, calib, qat_steps, lr))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--epochs", type=int, default=2, help="float training epochs (PyTorch, SGD lr 0.05, batch 64)")
    p.add_argument("--train-limit", type=int, default=None, help="train on the first N training images only")
    p.add_argument("--test-limit", type=int, default=None, help="evaluate on the first N test images only")
    p.add_argument("--calib", type=int, default=500, help="calibration images (the first N training images)")
    p.add_argument("--qat-steps", type=int, default=300, help="QAT (and float baseline) fine-tuning batches of 64")
    p.add_argument("--qat-lr", type=float, default=0.001, help="QAT fine-tuning SGD learning rate (momentum 0.9)")
    p.add_argument("--data", default=data.FASHION_MNIST_DIR, help="Fashion-MNIST folder")
    p.add_argument("--no-peers", action="store_true", help="skip PyTorch eager quantization and ONNX Runtime")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    xtr, ytr, xte, yte, calib = load_fashion_mnist(args)

    tmodel = train_float(torch, xtr, ytr, args.epochs)
    model = mnn_from_torch(torch, tmodel, xte[:256])
    fgraph = model.to_graph([INPUT_SHAPE])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:

        def size(graph, name):
            path = os.path.join(tmp, name)
            save_mnn(graph, path)
            return os.path.getsize(path)

        fsize = size(prepare_float(fgraph), "f.mnn")  # batch norms folded, as an inference model is stored
        facc = accuracy_mnn(fgraph, xte, yte)
        rows.append(("mnn float32", facc, fsize))
        rows.append(
            ("PyTorch float32 (same weights)", accuracy_torch(torch, tmodel, xte, yte), torch_size(torch, tmodel))
        )
        for method in quant.METHODS:
            res = quant.quantize(fgraph, {"input": calib}, method=method)
            print(f"  mnn PTQ {method}:\n{res.report()}", flush=True)
            rows.append((f"mnn PTQ int8, {method}", accuracy_mnn(res.graph, xte, yte), size(res.graph, method)))

        if args.qat_steps > 0:  # 0: PTQ only (QAT needs training batches to learn its ranges)
            t0 = time.perf_counter()
            q = qat_mnn(model, xtr, ytr, args.qat_steps, args.qat_lr)
            res = quant.convert(q, [INPUT_SHAPE], calibration={"input": calib[:128]})
            print(f"  mnn QAT ({args.qat_steps} steps): {time.perf_counter() - t0:.0f} s\n{res.report()}", flush=True)
            qat_row = (f"mnn QAT int8 ({args.qat_steps} steps of 64)", accuracy_mnn(res.graph, xte, yte))
            rows.append((*qat_row, size(res.graph, "qat")))
            ft = finetune_float(torch, tmodel, xtr, ytr, args.qat_steps, args.qat_lr)
            base = f"float32 fine-tuned for the same {args.qat_steps} steps (PyTorch): QAT's baseline"
            rows.append((base, accuracy_torch(torch, ft, xte, yte), None))

        if not args.no_peers:
            for relu in (False, True):
                peers = torch_peers(torch, tmodel, xtr, ytr, xte, yte, calib, args.qat_steps, args.qat_lr, relu)
                how = "ReLU6 -> ReLU, fused conv+bn+relu" if relu else "fused conv+bn, ReLU6 module kept"
                if relu:
                    rows.append(("PyTorch float32 with ReLU6 -> ReLU (no retraining)", peers["float"], None))
                rows.append((f"PyTorch eager PTQ int8 (x86, {how})", *peers["ptq"]))
                rows.append((f"PyTorch eager QAT int8 ({args.qat_steps} steps, {how})", *peers["qat"]))

            fp32, int8 = os.path.join(tmp, "mbv2.onnx"), os.path.join(tmp, "mbv2.int8.onnx")
            torch.onnx.export(
                tmodel,
                (torch.from_numpy(xte[:1]),),
                fp32,
                input_names=["input"],
                output_names=["output"],
                dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                dynamo=False,
            )
            ort_quantize(fp32, int8, calib)
            rows.append(
                ("ONNX Runtime quantize_static QDQ int8 (minmax)", accuracy_ort(int8, xte, yte), os.path.getsize(int8))
            )
            imported = mnn.load(int8)  # the same ORT int8 model, imported by mnn as int8 ops
            rows.append(
                (
                    "that ORT int8 model imported and run by mnn",
                    accuracy_mnn(imported, xte, yte),
                    size(imported, "ort.mnn"),
                )
            )
    print_table(rows, facc, fsize)


if __name__ == "__main__":
    main()

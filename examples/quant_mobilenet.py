"""A small MobileNetV2-style net on Fashion-MNIST: float vs mnn int8 PTQ (each method) vs ONNX Runtime
quantize_static, on the same float model (trained with PyTorch, exported to ONNX, imported by mnn).

    python examples/ptq_mobilenet.py --epochs 2

Inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project, BatchNorm, ReLU6, residual adds), so
this exercises what LeNet does not: batch norms folded into convolutions, ReLU6 folded into the int8
output range, depthwise int8 convolutions, and float residual adds between int8 layers.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import mnn_core as mnn
from mnn_core import data, quant
from mnn_core.format import save_mnn


def torch_mobilenet(torch):
    tnn = torch.nn

    def cbr(cin, cout, k, s, groups=1, act=True):
        layers = [tnn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), tnn.BatchNorm2d(cout)]
        return layers + [tnn.ReLU6()] if act else layers

    class Block(tnn.Module):
        def __init__(self, cin, cout, s, expand=4):
            super().__init__()
            mid = cin * expand
            self.body = tnn.Sequential(*cbr(cin, mid, 1, 1), *cbr(mid, mid, 3, s, groups=mid),
                                       *cbr(mid, cout, 1, 1, act=False))
            self.residual = s == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    return tnn.Sequential(*cbr(1, 16, 3, 1), Block(16, 16, 1), Block(16, 24, 2), Block(24, 24, 1),
                          Block(24, 32, 2), Block(32, 32, 1), *cbr(32, 64, 1, 1), tnn.AdaptiveAvgPool2d(1),
                          tnn.Flatten(), tnn.Linear(64, 10))


def accuracy(graph, x, y, batch=500):
    s = mnn.Session(graph)
    return float(np.mean(np.concatenate([s.run({"input": x[i:i + batch]}, copy=False)["output"].argmax(1)
                                         for i in range(0, len(x), batch)]) == y))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--calib", type=int, default=500)
    p.add_argument("--train-limit", type=int, default=None, help="train on the first N images only")
    p.add_argument("--test-limit", type=int, default=None)
    p.add_argument("--data", default=data.FASHION_MNIST_DIR)
    args = p.parse_args(argv)

    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    torch.set_num_threads(1)
    torch.manual_seed(0)
    xtr, ytr = data.load_mnist(args.data, train=True)
    if args.train_limit:
        xtr, ytr = xtr[:args.train_limit], ytr[:args.train_limit]
    xte, yte = data.load_mnist(args.data, train=False)
    if args.test_limit:
        xte, yte = xte[:args.test_limit], yte[:args.test_limit]
    calib = xtr[:args.calib]
    model = torch_mobilenet(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(0)
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(xtr))
        for i in range(0, len(xtr), 64):
            idx = order[i:i + 64]
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(xtr[idx])), torch.from_numpy(ytr[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"  float training epoch {epoch + 1}: last loss {loss.item():.4f}", flush=True)
    model.eval()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = os.path.join(tmp, "mbv2.onnx")
        torch.onnx.export(model, (torch.from_numpy(xte[:1]),), fp32, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, dynamo=False)
        graph = mnn.load(fp32)

        def size(g, name):
            path = os.path.join(tmp, name)
            save_mnn(g, path)
            return os.path.getsize(path)

        fsize = size(graph, "f.mnn")
        facc = accuracy(graph, xte, yte)
        rows.append(("mnn float32", facc, fsize))
        for method in quant.METHODS:
            res = quant.quantize(graph, {"input": calib}, method=method)
            print(f"  mnn PTQ {method}:\n{res.report()}", flush=True)
            rows.append((f"mnn PTQ int8, {method}", accuracy(res.graph, xte, yte), size(res.graph, method)))

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.it = iter([{"input": calib[i:i + 1]} for i in range(len(calib))])

            def get_next(self):
                return next(self.it, None)

        int8 = os.path.join(tmp, "mbv2.int8.onnx")
        quantize_static(fp32, int8, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        s = ort.InferenceSession(int8, providers=["CPUExecutionProvider"])
        pred = np.concatenate([s.run(None, {"input": xte[i:i + 500]})[0].argmax(1) for i in range(0, len(xte), 500)])
        rows.append(("ONNX Runtime quantize_static QDQ int8", float((pred == yte).mean()), os.path.getsize(int8)))
        imported = mnn.load(int8)  # the same ORT int8 model, imported by mnn as int8 ops
        rows.append(("that ORT int8 model imported and run by mnn", accuracy(imported, xte, yte),
                     size(imported, "ort.mnn")))
    print("\n| model | test accuracy | vs float | size (bytes) | size vs mnn float |\n|---|---|---|---|---|")
    for name, acc, nbytes in rows:
        print(f"| {name} | {acc * 100:.2f}% | {(acc - facc) * 100:+.2f} | {nbytes} | {nbytes / fsize:.3f}x |")


if __name__ == "__main__":
    main()

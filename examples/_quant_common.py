"""Pieces the quantization examples (qat.py, quant_mobilenet.py) share: accuracy through an mnn Session or a
PyTorch model, the fine-tuning loop that mnn QAT, PyTorch QAT and the float baseline all run (the same random
batches of 64 for each), ONNX Runtime's quantize_static as a peer, and the results table.

Not a library: a sibling module the examples import (they run as scripts, so examples/ is on sys.path).
"""

from __future__ import annotations

import copy
import os
import tempfile
import time

import numpy as np

import mnn_core as mnn
from mnn_core import data, optim, quant
from mnn_core.express import functional as F

BATCH = 64
FINETUNE_SEED = 1  # every fine-tuning run (mnn QAT, PyTorch QAT, the float baseline) draws the same batches


def load_fashion_mnist(args):
    """Fashion-MNIST as the examples' flags ask (--data, --train-limit, --test-limit, --calib): train and test
    images and labels, and the calibration images (the first --calib training images)."""
    xtr, ytr = data.load_mnist(args.data, train=True)
    if args.train_limit:
        xtr, ytr = xtr[: args.train_limit], ytr[: args.train_limit]
    xte, yte = data.load_mnist(args.data, train=False)
    if args.test_limit:
        xte, yte = xte[: args.test_limit], yte[: args.test_limit]
    calib = xtr[: args.calib]
    print(f"Fashion-MNIST: {len(xtr)} train, {len(xte)} test images; calibration {len(calib)}", flush=True)
    return xtr, ytr, xte, yte, calib


def finetune_batches(n: int, steps: int, seed: int = FINETUNE_SEED):
    """The index arrays of the fine-tuning batches: `steps` draws of BATCH random training images."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield rng.integers(0, n, BATCH)


def accuracy_mnn(graph, x, y, batch=500) -> float:
    s = mnn.Session(graph)
    correct = 0
    for i in range(0, len(x), batch):
        correct += int((s.run({"input": x[i : i + batch]}, copy=False)["output"].argmax(1) == y[i : i + batch]).sum())
    return correct / len(x)


def accuracy_torch(torch, model, x, y, batch=500) -> float:
    with torch.no_grad():
        pred = np.concatenate(
            [model(torch.from_numpy(x[i : i + batch])).argmax(1).numpy() for i in range(0, len(x), batch)]
        )
    return float((pred == y).mean())


def train_torch_epochs(torch, model, xtr, ytr, epochs, lr, seed=0):
    """The float model's training: `epochs` shuffled passes in batches of BATCH, SGD (momentum 0.9), in place;
    returns the model in eval mode."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        model.train()
        t0 = time.perf_counter()
        order = rng.permutation(len(xtr))
        for i in range(0, len(xtr), BATCH):
            idx = order[i : i + BATCH]
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(xtr[idx])), torch.from_numpy(ytr[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(
            f"  float training epoch {epoch + 1}: last loss {loss.item():.4f} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    return model.eval()


def train_torch_steps(torch, model, xtr, ytr, steps, lr):
    """SGD (momentum 0.9) on the fine-tuning batches, in place; the model is left in train mode."""
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for idx in finetune_batches(len(xtr), steps):
        loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(xtr[idx])), torch.from_numpy(ytr[idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def finetune_float(torch, float_model, xtr, ytr, steps, lr):
    """The float model trained as long as QAT trains (same batches, same optimizer): what QAT should match."""
    return train_torch_steps(torch, copy.deepcopy(float_model), xtr, ytr, steps, lr).eval()


def qat_mnn(model, xtr, ytr, steps, lr, log_every=50):
    """mnn quantization-aware training: prepare_qat (a copy of `model`), then the fine-tuning batches."""
    q = quant.prepare_qat(model)
    opt = optim.SGD(q.parameters(), lr=lr, momentum=0.9)
    t0 = time.perf_counter()
    for step, idx in enumerate(finetune_batches(len(xtr), steps)):
        loss = F.cross_entropy(q(xtr[idx]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (step + 1) % log_every == 0:
            print(
                f"  mnn QAT step {step + 1}/{steps}: loss {loss.item():.4f} "
                f"({(time.perf_counter() - t0) / (step + 1):.2f} s/step)",
                flush=True,
            )
    q.eval()
    return q


def torch_eager_quant(torch, fresh, fuse, xtr, ytr, xte, yte, calib, qat_steps, lr):
    """PyTorch eager-mode PTQ and QAT (x86 engine, default qconfigs) of the float models `fresh()` returns,
    with the module runs `fuse` fused: {"ptq" | "qat": (accuracy, bytes)}."""
    aq = torch.ao.quantization
    torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else "fbgemm"
    engine = torch.backends.quantized.engine
    out = {}

    m = fresh().eval()
    m.qconfig = aq.get_default_qconfig(engine)
    m = aq.fuse_modules(m, fuse)
    aq.prepare(m, inplace=True)
    with torch.no_grad():
        for i in range(0, len(calib), 100):
            m(torch.from_numpy(calib[i : i + 100]))
    aq.convert(m, inplace=True)
    out["ptq"] = (accuracy_torch(torch, m, xte, yte), torch_size(torch, m))

    m = fresh().train()
    m.qconfig = aq.get_default_qat_qconfig(engine)
    m = aq.fuse_modules_qat(m, fuse)
    aq.prepare_qat(m, inplace=True)
    train_torch_steps(torch, m, xtr, ytr, qat_steps, lr)
    m.eval()
    aq.convert(m, inplace=True)
    out["qat"] = (accuracy_torch(torch, m, xte, yte), torch_size(torch, m))
    return out


def torch_size(torch, m) -> int:
    """Bytes of torch.save(state_dict): PyTorch's own container for a quantized model."""
    with tempfile.NamedTemporaryFile(suffix=".pt") as f:
        torch.save(m.state_dict(), f.name)
        return os.path.getsize(f.name)


def ort_quantize(fp32_path, int8_path, calib) -> None:
    """ONNX Runtime quantize_static: QDQ, per-channel int8 weights, uint8 activations, MinMax calibration."""
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    ort.set_default_logger_severity(3)  # not one warning per unused initializer of a torch.onnx.export model

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"input": calib[i : i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantize_static(
        fp32_path,
        int8_path,
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )


def accuracy_ort(path, x, y, batch=500) -> float:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    pred = np.concatenate([sess.run(None, {"input": x[i : i + batch]})[0].argmax(1) for i in range(0, len(x), batch)])
    return float((pred == y).mean())


def print_table(rows, facc: float, fsize: int) -> None:
    """rows: (name, accuracy, size in bytes or None); accuracy and size relative to the mnn float model."""
    print("\n| model | test accuracy | vs float | size (bytes) | size vs mnn float |\n|---|---|---|---|---|")
    for name, acc, nbytes in rows:
        sz = "" if nbytes is None else f"{nbytes}"
        ratio = "" if nbytes is None else f"{nbytes / fsize:.3f}x"
        print(f"| {name} | {acc * 100:.2f}% | {(acc - facc) * 100:+.2f} | {sz} | {ratio} |")

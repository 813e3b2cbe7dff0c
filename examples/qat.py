"""LeNet-5 on Fashion-MNIST: float vs int8 post-training quantization (each method) vs
quantization-aware training, with PyTorch eager-mode quantization and ONNX Runtime's
quantize_static as peers on the same float weights and the same data.

    apt-get install -y dataset-fashion-mnist
    python examples/qat.py                         # the table in benchmarks/RESULTS_QUANT.md
    python examples/qat.py --epochs 1 --qat-steps 20 --test-limit 2000   # quick look

The float model is trained once with PyTorch (fast on a CPU) and its weights are loaded into
the identical mnn model, so every row starts from the same float network. Calibration uses
the first --calib training images; QAT fine-tunes for --qat-steps batches in eager mode.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

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
    train_torch_epochs,
)

from mnn_core import data, quant
from mnn_core.format import save_mnn
from mnn_core.testing.models import lenet  # in mnn_core.nn or torch.nn: the same layers and state_dict keys


def torch_lenet(torch, quantizable: bool = False):
    model = lenet(torch.nn)
    if not quantizable:
        return model
    aq = torch.ao.quantization
    return torch.nn.Sequential(aq.QuantStub(), *model, aq.DeQuantStub())


def train_float(torch, x, y, epochs, seed=0):
    torch.manual_seed(seed)
    return train_torch_epochs(torch, torch_lenet(torch), x, y, epochs, lr=0.01, seed=seed)


def torch_peers(torch, float_model, xtr, ytr, xte, yte, calib, qat_steps, lr):
    """PyTorch eager-mode PTQ and QAT (x86 backend, per-channel weights) from the same float weights."""
    fuse = [["1", "2"], ["4", "5"], ["8", "9"], ["10", "11"]]  # conv+relu, linear+relu (shifted by QuantStub)

    def fresh():
        m = torch_lenet(torch, quantizable=True)
        m.load_state_dict(
            {str(int(k.split(".")[0]) + 1) + "." + k.split(".", 1)[1]: v for k, v in float_model.state_dict().items()}
        )
        return m

    return torch_eager_quant(torch, fresh, fuse, xtr, ytr, xte, yte, calib, qat_steps, lr)


def ort_peer(float_graph, calib, xte, yte, tmp):
    """ONNX Runtime quantize_static (QDQ, per-channel, MinMax) of the same float model."""
    from mnn_core.convert import save_onnx

    fp32, int8 = os.path.join(tmp, "lenet.onnx"), os.path.join(tmp, "lenet.int8.onnx")
    save_onnx(float_graph, fp32)
    ort_quantize(fp32, int8, calib)
    return accuracy_ort(int8, xte, yte), os.path.getsize(int8), os.path.getsize(fp32)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=3, help="float training epochs (PyTorch)")
    p.add_argument("--calib", type=int, default=1000, help="calibration images (from the training set)")
    p.add_argument("--qat-steps", type=int, default=200, help="QAT fine-tuning batches of 64")
    p.add_argument("--qat-lr", type=float, default=0.001)
    p.add_argument("--train-limit", type=int, default=None, help="train on the first N training images only")
    p.add_argument("--test-limit", type=int, default=None)
    p.add_argument("--data", default=data.FASHION_MNIST_DIR)
    p.add_argument("--no-peers", action="store_true")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    xtr, ytr, xte, yte, calib = load_fashion_mnist(args)

    t0 = time.perf_counter()
    tmodel = train_float(torch, xtr, ytr, args.epochs)
    print(f"  ({time.perf_counter() - t0:.0f} s)")
    model = lenet()
    model.load_state_dict(tmodel.state_dict())
    fgraph = model.to_graph([(1, 1, 28, 28)])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:

        def size(graph, name):
            path = os.path.join(tmp, name)
            save_mnn(graph, path)
            return os.path.getsize(path)

        fsize = size(fgraph, "f.mnn")
        facc = accuracy_mnn(fgraph, xte, yte)
        rows.append(("mnn float32", facc, fsize))
        rows.append(("PyTorch float32 (same weights)", accuracy_torch(torch, tmodel, xte, yte), None))
        for method in quant.METHODS:
            t0 = time.perf_counter()
            res = quant.quantize(fgraph, {"input": calib}, method=method)
            print(f"  mnn PTQ {method}: {time.perf_counter() - t0:.1f} s\n{res.report()}", flush=True)
            rows.append((f"mnn PTQ int8, {method}", accuracy_mnn(res.graph, xte, yte), size(res.graph, method)))
        wo = quant.quantize(fgraph, weight_only=True)
        rows.append(("mnn int8 weights, float compute", accuracy_mnn(wo.graph, xte, yte), size(wo.graph, "wo")))
        t0 = time.perf_counter()
        q = qat_mnn(model, xtr, ytr, args.qat_steps, args.qat_lr)
        res = quant.convert(q, [(1, 1, 28, 28)], calibration={"input": calib[:128]})
        print(f"  mnn QAT ({args.qat_steps} steps): {time.perf_counter() - t0:.0f} s\n{res.report()}", flush=True)
        rows.append(
            (f"mnn QAT int8 ({args.qat_steps} steps of 64)", accuracy_mnn(res.graph, xte, yte), size(res.graph, "qat"))
        )
        ft = finetune_float(torch, tmodel, xtr, ytr, args.qat_steps, args.qat_lr)
        rows.append(
            (
                f"float32 fine-tuned for the same {args.qat_steps} steps (PyTorch): QAT's baseline",
                accuracy_torch(torch, ft, xte, yte),
                None,
            )
        )
        if not args.no_peers:
            peers = torch_peers(torch, tmodel, xtr, ytr, xte, yte, calib, args.qat_steps, args.qat_lr)
            rows.append(("PyTorch eager PTQ int8 (x86, histogram)", *peers["ptq"]))
            rows.append((f"PyTorch eager QAT int8 ({args.qat_steps} steps)", *peers["qat"]))
            acc, isize, _ = ort_peer(fgraph, calib, xte, yte, tmp)
            rows.append(("ONNX Runtime quantize_static QDQ int8 (minmax)", acc, isize))
    print_table(rows, facc, fsize)


if __name__ == "__main__":
    main()

"""GEMM-heavy layers on mnn-x86, fp32 against bf16 (precision="low"), in one interleaved run.

    python benchmarks/bench_bf16_layers.py --threads 1 --rounds 30

Each layer is a one-op session per configuration; the configurations run in turn, --rounds times,
and each keeps its minimum (on a shared machine a run is rarely preempted in every round). The 3x3
stride-1 layers also run as Winograd F(4x4, 3x3), fp32 and with its 36 GEMMs on bf16 (what
precision="low" does where the size rule picks Winograd; mnn_x86/precision.py).
Needs a CPU with AVX-512 BF16 for the bf16 column to differ from fp32.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

#: name -> (op, input shape, constant weight shape, attrs)
LAYERS = {
    "1x1 256->256 28x28": ("Conv", (1, 256, 28, 28), (256, 256, 1, 1), {"kernel_shape": [1, 1]}),
    "1x1 96->576 14x14": ("Conv", (1, 96, 14, 14), (576, 96, 1, 1), {"kernel_shape": [1, 1]}),
    "3x3 s2 128->256 28x28": (
        "Conv",
        (1, 128, 28, 28),
        (256, 128, 3, 3),
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1] * 4},
    ),
    "7x7 s2 3->64 224x224": (
        "Conv",
        (1, 3, 224, 224),
        (64, 3, 7, 7),
        {"kernel_shape": [7, 7], "strides": [2, 2], "pads": [3] * 4},
    ),
    "3x3 64->64 56x56": ("Conv", (1, 64, 56, 56), (64, 64, 3, 3), {"kernel_shape": [3, 3], "pads": [1] * 4}),
    "3x3 256->256 14x14": ("Conv", (1, 256, 14, 14), (256, 256, 3, 3), {"kernel_shape": [3, 3], "pads": [1] * 4}),
    "3x3 512->512 7x7": ("Conv", (1, 512, 7, 7), (512, 512, 3, 3), {"kernel_shape": [3, 3], "pads": [1] * 4}),
    "MatMul 64x1024 @ 1024x1024": ("MatMul", (64, 1024), (1024, 1024), {}),
    "Gemm 1x512 @ 512x1000": ("Gemm", (1, 512), (1000, 512), {"transB": 1}),
}

#: column -> (precision, options); Winograd only where it applies
CONFIGS = {
    "fp32": ("normal", {"x86.winograd": "off"}),
    "bf16": ("low", {"x86.winograd": "off"}),
    "fp32 winograd": ("normal", {"x86.winograd": "on"}),
    "bf16 winograd": ("low", {"x86.winograd": "on"}),
}


def _graph(op, x_shape, w_shape, attrs, rng):
    graph = Graph(name=op)
    graph.inputs["x"] = TensorInfo(x_shape, "float32")
    graph.initializers["w"] = (rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
    graph.nodes.append(Node(op, ["x", "w"], ["y"], dict(attrs), op.lower()))
    graph.outputs = ["y"]
    return graph, {"x": rng.standard_normal(x_shape).astype(np.float32)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'layer':28s} " + " ".join(f"{c:>14s}" for c in CONFIGS) + "   fp32/bf16 (im2col, winograd)")
    for name, (op, x_shape, w_shape, attrs) in LAYERS.items():
        graph, feeds = _graph(op, x_shape, w_shape, attrs, rng)
        wino = op == "Conv" and w_shape[2:] == (3, 3) and "strides" not in attrs
        sessions = {
            c: Session(graph, backend="x86", threads=args.threads, precision=pr, options=o)
            for c, (pr, o) in CONFIGS.items()
            if wino or "winograd" not in c
        }
        best = dict.fromkeys(sessions, float("inf"))
        for _ in range(args.rounds):
            for c, sess in sessions.items():
                t0 = time.perf_counter()
                sess.run(feeds, copy=False)
                best[c] = min(best[c], (time.perf_counter() - t0) * 1e3)
        cells = " ".join(f"{best[c]:11.3f} ms" if c in best else f"{'-':>14s}" for c in CONFIGS)
        gains = f"{best['fp32'] / best['bf16']:.2f}x"
        if wino:
            gains += f", {best['fp32 winograd'] / best['bf16 winograd']:.2f}x"
        print(f"{name:28s} {cells}   {gains}", flush=True)


if __name__ == "__main__":
    main()

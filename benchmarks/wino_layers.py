"""Minimum time of the stride-1 3x3 convolutions of SqueezeNet 1.1 and ResNet-18, each as a one-node
session on mnn-x86 (bias and ReLU fused, padding 1, batch 1): the Winograd layers, timed alone.

    python benchmarks/wino_layers.py                      # every layer, 1 thread, Winograd "auto"
    python benchmarks/wino_layers.py --layer sq27 --layer r28 --repeat 200
    python benchmarks/wino_layers.py --evict-mb 3         # L2 evicted before each run (weights in L3)
    python benchmarks/wino_layers.py --winograd off       # the im2col GEMM instead

The minimum over --repeat runs is robust to a shared machine; compare two builds by alternating
runs of this script (e.g. PYTHONPATH pointing at the other build's install). Not a test.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

#: name -> (C, O, H = W)
LAYERS = {
    "sq55": (16, 64, 55),
    "sq27": (32, 128, 27),
    "sq13a": (48, 192, 13),
    "sq13b": (64, 256, 13),
    "r56": (64, 64, 56),
    "r28": (128, 128, 28),
    "r14": (256, 256, 14),
}


def conv_session(c: int, o: int, hw: int, threads: int, winograd: str, rng) -> tuple[Session, dict]:
    graph = Graph(name="conv")
    graph.inputs["x"] = TensorInfo((1, c, hw, hw), "float32")
    graph.initializers["w"] = (rng.standard_normal((o, c, 3, 3)) * 0.1).astype(np.float32)
    graph.initializers["b"] = rng.standard_normal(o).astype(np.float32)
    attrs = {"pads": [1, 1, 1, 1], "activation": "relu"}
    graph.nodes.append(Node("Conv", ["x", "w", "b"], ["y"], attrs, "conv"))
    graph.outputs = ["y"]
    sess = Session(
        graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.winograd": winograd}
    )
    return sess, {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layer", action="append", choices=sorted(LAYERS), help="default: all")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=60)
    p.add_argument("--winograd", default="auto", choices=("auto", "on", "off"))
    p.add_argument("--evict-mb", type=float, default=0.0, help="write this many MB between runs (0: none)")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    junk = np.zeros(int(args.evict_mb * 2**20 / 4), np.float32)
    total = 0.0
    for name in args.layer or list(LAYERS):
        c, o, hw = LAYERS[name]
        sess, feeds = conv_session(c, o, hw, args.threads, args.winograd, rng)
        for _ in range(5):
            sess.run(feeds, copy=False)
        best = float("inf")
        for _ in range(args.repeat):
            if junk.size:
                junk += 1.0
            t0 = time.perf_counter()
            sess.run(feeds, copy=False)
            best = min(best, time.perf_counter() - t0)
        total += best
        print(f"{name:6s} {c:3d}->{o:3d} @{hw:2d}x{hw:<2d} {best * 1e3:7.3f} ms")
    print(f"total {total * 1e3:.3f} ms")


if __name__ == "__main__":
    main()

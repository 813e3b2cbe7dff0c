"""How SqueezeNet's squeeze (a 64->16 1x1 convolution at 55x55) scales from 1 to 2 threads, after
each kind of producer and with x86's NC16 layout on or off.

    python benchmarks/bench_handoff.py
    python benchmarks/bench_handoff.py --repeat 500

Each case is a two-node graph on mnn-x86: a producer (a 1x1 convolution, a Winograd 3x3
convolution, a 3x3/2 MaxPool) writing 64 channels at 55x55, then the squeeze reading them. Between
two 1x1s the layouts pass keeps the tensor in NC16 and the squeeze runs on the pointwise kernel;
otherwise (or with x86.layouts="off") it runs as a GEMM on the dense NCHW input (gemm_rows). Times
are each step's minimum over --repeat profiled runs. Session 9 (benchmarks/RESULTS.md) found the
dense squeeze slower on two threads than on one, whatever its producer. Not a test.
"""

from __future__ import annotations

import argparse

import numpy as np

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

PRODUCERS = ("1x1", "winograd", "maxpool")


def _graph(producer: str) -> Graph:
    rng = np.random.default_rng(0)
    g = Graph(name=f"{producer}_then_squeeze")
    if producer == "maxpool":
        g.inputs["x"] = TensorInfo((1, 64, 111, 111), "float32")
        g.nodes.append(Node("MaxPool", ["x"], ["h"], {"kernel_shape": [3, 3], "strides": [2, 2]}, "producer"))
    else:
        k = 3 if producer == "winograd" else 1
        g.inputs["x"] = TensorInfo((1, 16, 55, 55), "float32")
        g.initializers["w1"] = (rng.standard_normal((64, 16, k, k)) * 0.1).astype(np.float32)
        g.nodes.append(Node("Conv", ["x", "w1"], ["h"], {"pads": [k // 2] * 4, "activation": "relu"}, "producer"))
    g.initializers["w2"] = (rng.standard_normal((16, 64, 1, 1)) * 0.1).astype(np.float32)
    g.nodes.append(Node("Conv", ["h", "w2"], ["y"], {"activation": "relu"}, "squeeze"))
    g.outputs = ["y"]
    return g


def step_minima(producer: str, threads: int, repeat: int, layouts: str) -> dict[str, float]:
    graph = _graph(producer)
    sess = Session(
        graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.layouts": layouts}
    )
    feeds = {"x": np.random.default_rng(1).standard_normal(graph.inputs["x"].shape).astype(np.float32)}
    for _ in range(20):
        sess.run(feeds, copy=False)
    best: dict[str, float] = {}
    for _ in range(repeat):
        sess.run(feeds, copy=False, profile=True)
        for step, ms in sess.profile():
            best[step] = min(ms, best.get(step, float("inf")))
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args(argv)
    print("producer  layouts  producer ms 1 / 2 threads  squeeze ms 1 / 2 threads  squeeze speed-up")
    for producer in PRODUCERS:
        for layouts in ("auto", "off"):
            one = step_minima(producer, 1, args.repeat, layouts)
            two = step_minima(producer, 2, args.repeat, layouts)
            print(
                f"{producer:9s} {layouts:7s} {one['producer']:8.3f} / {two['producer']:.3f}         "
                f"{one['squeeze']:8.3f} / {two['squeeze']:.3f}        {one['squeeze'] / two['squeeze']:5.2f}x"
            )


if __name__ == "__main__":
    main()

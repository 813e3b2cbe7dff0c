"""Small random CNN graphs, to compare a backend with the reference on whole graphs.

One-node conformance cases (conformance.py) test each kernel; what they cannot test is what a
backend does with several ops at once: its fusions (a convolution with the Add and Relu after it,
a convolution with the pool after it), private layouts between its ops, in-place Concat. A graph
here is a few convolutions (1x1, 3x3, depthwise, strided), element-wise ops, activations, pools
and Concats, with residual branches: an Add of two values of one shape, often two convolutions of
one input (ResNet's bottleneck with its downsample branch), and values read by several ops.

    from mnn_core.testing.random_graphs import compare_random_graphs
    failures = compare_random_graphs("x86", range(300), threads=2)
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..graph.builder import GraphBuilder
from ..graph.ir import Graph

#: channel counts a convolution picks from (odd ones too: a backend's channel blocks have tails)
CHANNELS = (3, 8, 16, 20, 32)


class _Net:
    """The graph being built: its values and their (N, C, H, W) shapes."""

    def __init__(self, rng: np.random.Generator, batch: int, size: int):
        self.rng = rng
        self.b = GraphBuilder("random")
        c = int(rng.choice(CHANNELS))
        self.values = [(self.b.input("x", (batch, c, size, size)), (batch, c, size, size))]

    def pick(self):
        return self.values[int(self.rng.integers(len(self.values)))]

    def add(self, value, shape):
        self.values.append((value, shape))
        return value, shape

    def const(self, shape, scale):
        return self.b.const((self.rng.standard_normal(shape) * scale).astype("float32"))

    def conv(self, src, out_c=None, k=None, stride=None, depthwise=False):
        (x, (n, c, h, w)), rng = src, self.rng
        k = k if k is not None else int(rng.choice((1, 1, 3)))
        stride = stride if stride is not None else (2 if rng.random() < 0.2 and min(h, w) >= 4 else 1)
        out_c = c if depthwise else (out_c or int(rng.choice(CHANNELS)))
        group = c if depthwise else 1
        weight = self.const((out_c, c // group, k, k), 1.0 / np.sqrt(c // group * k * k))
        bias = self.const((out_c,), 0.1) if rng.random() < 0.7 else None
        pad = k // 2
        y = self.b.Conv(x, weight, bias, pads=[pad] * 4, strides=[stride] * 2, group=group)
        size = lambda d: (d + 2 * pad - k) // stride + 1  # noqa: E731
        return self.add(y, (n, out_c, size(h), size(w)))

    def same_shape_pair(self):
        by_shape: dict = {}
        for v in self.values:
            by_shape.setdefault(v[1], []).append(v)
        pairs = [vs for vs in by_shape.values() if len(vs) >= 2]
        if not pairs:
            return None
        vs = pairs[int(self.rng.integers(len(pairs)))]
        i, j = self.rng.choice(len(vs), 2, replace=False)
        return vs[int(i)], vs[int(j)]

    def step(self) -> None:
        rng, b = self.rng, self.b
        kind = rng.choice(["conv", "conv", "branches", "residual", "act", "pool", "concat", "mul"])
        if kind == "conv":
            self.conv(self.pick(), depthwise=rng.random() < 0.25)
        elif kind == "branches":  # act(conv_a(x) + conv_b(x)): two convolutions of one input, added
            src = self.pick()
            out_c, stride = int(rng.choice(CHANNELS)), int(rng.choice((1, 1, 2)))
            ya, shape = self.conv(src, out_c, 1, stride)
            yb, _ = self.conv(src, out_c, int(rng.choice((1, 3))), stride)
            self.activation(self.add(b.Add(ya, yb), shape))
        elif kind == "residual":  # conv(x) + x, or any two values of one shape
            pair = self.same_shape_pair()
            if pair is None:
                src = self.pick()
                pair = (src, self.conv(src, src[1][1], int(rng.choice((1, 3))), 1))
            (x, shape), (y, _) = pair
            self.add(b.Add(x, y) if rng.random() < 0.5 else b.Add(y, x), shape)
        elif kind == "act":
            self.activation(self.pick())
        elif kind == "pool":
            (x, (n, c, h, w)) = self.pick()
            if min(h, w) < 2:
                return
            if rng.random() < 0.15:  # (x86 fuses a convolution with the global pool after it)
                self.add(b.GlobalAveragePool(x), (n, c, 1, 1))
            elif rng.random() < 0.5:
                self.add(b.MaxPool(x, kernel_shape=[2, 2], strides=[2, 2]), (n, c, h // 2, w // 2))
            else:
                op = b.MaxPool if rng.random() < 0.5 else b.AveragePool
                self.add(
                    op(x, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                    (n, c, (h - 1) // 2 + 1, (w - 1) // 2 + 1),
                )
        elif kind == "concat":
            (x, (n, c, h, w)) = self.pick()
            same = [v for v in self.values if v[1][2:] == (h, w) and v[0] != x]
            if not same:
                return
            y, (_, c2, _, _) = same[int(rng.integers(len(same)))]
            self.add(b.Concat(x, y, axis=1), (n, c + c2, h, w))
        else:  # a per-channel scale, as a squeeze-and-excitation block's gate broadcasts
            x, (n, c, h, w) = self.pick()
            self.add(b.Mul(x, self.const((1, c, 1, 1), 1.0)), (n, c, h, w))

    def activation(self, src):
        x, shape = src
        b, pick = self.b, int(self.rng.integers(4))
        y = (b.Relu(x), b.Clip(x, min=0.0, max=6.0), b.Sigmoid(x), b.Relu(x))[pick]
        return self.add(y, shape)


def random_graph(seed: int, nodes: int = 8) -> tuple[Graph, dict[str, np.ndarray]]:
    """A random graph of about `nodes` steps and a random input for it, both from `seed`. Its outputs:
    the last value, and (half the time) another one, so that some values have readers outside."""
    rng = np.random.default_rng(seed)
    net = _Net(rng, batch=int(rng.choice((1, 1, 2))), size=int(rng.choice((5, 7, 8, 12))))
    for _ in range(nodes):
        net.step()
    last = net.values[-1][0]
    net.b.output(last, "y")
    if len(net.values) > 2 and rng.random() < 0.5:
        other = net.values[int(rng.integers(1, len(net.values) - 1))][0]
        if other != last:
            net.b.output(other)  # (a value other ops read too)
    graph = net.b.build()
    shape = net.values[0][1]
    return graph, {"x": rng.standard_normal(shape).astype("float32")}


def compare_random_graphs(
    backend: str, seeds: Iterable[int], rtol: float = 1e-3, atol: float = 1e-4, **session_options
) -> list[str]:
    """Run random_graph(seed) for each seed on `backend` (fallback off) and on the reference backend;
    returns one line per graph whose outputs differ or that failed to plan or run (empty: all agree)."""
    from ..runtime.session import Session

    failures = []
    for seed in seeds:
        graph, feeds = random_graph(seed)
        try:
            want = Session(graph, backend="reference").run(feeds)
            got = Session(graph, backend=backend, fallback=False, **session_options).run(feeds)
        except Exception as exc:
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}")
            continue
        for name, ref in want.items():
            scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
            if got[name].shape != ref.shape or not np.allclose(got[name], ref, rtol=rtol, atol=atol * scale):
                err = np.abs(got[name] - ref).max() if got[name].shape == ref.shape else "shape"
                failures.append(f"seed {seed}: output {name!r} differs (max error {err})")
    return failures

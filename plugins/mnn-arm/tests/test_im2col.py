"""Convolutions through im2col + GEMM on the fp32 path (csrc/fp32.c's im2col_rows_f32: one row of B at a time,
pieces cut at panel boundaries): 1 x 3 and 3 x 1 kernels (openWakeWord's), asymmetric pads wider than the
kernel, strides 1 / 2 / 3 on either axis, dilations, planes narrower than a vector, chunks of output columns
that start inside an output row (a plane wider than one chunk, and two threads). Oracle: the reference
backend on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core import GraphBuilder, Session
from mnn_core.backend import PrepareContext

pytestmark = needs_arm
RTOL = 1e-5


def _conv(c, h, w, o, kernel, strides, pads, dilations, act, seed):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((o, c, *kernel)).astype(np.float32)
    g = GraphBuilder("conv")
    y = g.Conv(
        g.input("x", (1, c, h, w), "float32"),
        g.const(weight),
        g.const(rng.standard_normal(o).astype(np.float32)),
        kernel_shape=list(kernel),
        strides=list(strides),
        pads=list(pads),
        dilations=list(dilations),
    )
    if act == "relu":
        y = g.Relu(y)
    elif act == "leaky":
        y = g.LeakyRelu(y, alpha=0.2)
    g.output(y, "y")
    return g.build(), {"x": rng.standard_normal((1, c, h, w)).astype(np.float32)}


CASES = [  # C, H, W, O, kernel, strides, pads (top, left, bottom, right), dilations, activation
    (24, 17, 32, 24, (1, 3), (1, 1), (0, 1, 0, 1), (1, 1), "leaky"),
    (24, 17, 32, 24, (3, 1), (1, 1), (0, 0, 0, 0), (1, 1), None),
    (48, 9, 6, 40, (1, 3), (1, 1), (0, 1, 0, 1), (1, 1), "relu"),
    (13, 7, 2, 11, (3, 1), (1, 1), (1, 0, 1, 0), (1, 1), None),
    (5, 11, 13, 7, (3, 3), (2, 1), (2, 0, 1, 3), (1, 1), None),
    (6, 12, 19, 9, (1, 3), (1, 2), (0, 2, 0, 1), (1, 1), None),
    (7, 15, 23, 5, (3, 3), (3, 3), (1, 1, 1, 1), (1, 1), "relu"),
    (4, 14, 17, 6, (3, 2), (1, 1), (2, 2, 2, 2), (2, 3), None),
    (3, 5, 3, 8, (1, 5), (1, 1), (0, 4, 0, 4), (1, 1), None),  # pads wider than the 3-column plane
    (1, 70, 61, 4, (3, 3), (1, 2), (1, 1, 1, 1), (1, 1), None),  # wider than one chunk of columns
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c, h, w, o, kernel, strides, pads, dilations, act", CASES)
def test_im2col_conv(c, h, w, o, kernel, strides, pads, dilations, act, threads):
    graph, feeds = _conv(c, h, w, o, kernel, strides, pads, dilations, act, seed=c * 13 + h)
    want = Session(graph, backend="reference").run(feeds)["y"]
    sess = Session(graph, backend="arm", fallback=False, threads=threads, options={"arm.winograd": "off"})
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


def _conv1d(n, w, o, k, stride, bias, act, seed):
    rng = np.random.default_rng(seed)
    g = GraphBuilder("conv1d")
    ins = [g.input("x", (n, 1, w), "float32"), g.const(rng.standard_normal((o, 1, k)).astype(np.float32))]
    if bias:
        ins.append(g.const(rng.standard_normal(o).astype(np.float32)))
    y = g.Conv(*ins, kernel_shape=[k], strides=[stride])
    if act == "relu":
        y = g.Relu(y)
    g.output(y, "y")
    return g.build(), {"x": rng.standard_normal((n, 1, w)).astype(np.float32)}


WINDOWS = [  # N, W, O, kernel, stride, bias, activation: one channel, few frames (an STFT's)
    (1, 1760, 257, 512, 160, False, None),
    (2, 300, 37, 40, 33, True, "relu"),
    (1, 95, 20, 9, 11, True, None),
    (3, 64, 26, 5, 8, False, None),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, w, o, k, stride, bias, act", WINDOWS)
def test_conv_by_windows(n, w, o, k, stride, bias, act, threads):
    from mnn_arm._common import KERNELS

    graph, feeds = _conv1d(n, w, o, k, stride, bias, act, seed=w + o)
    infos = graph.infer()
    node = next(x for x in graph.nodes if x.op == "Conv")
    execution = KERNELS["Conv"].impl(
        node, [infos[i] for i in node.inputs], [infos[i] for i in node.outputs], graph.initializers, PrepareContext()
    )
    assert execution.name == "arm.Conv.windows [fp32]"
    want = Session(graph, backend="reference").run(feeds)["y"]
    got = Session(graph, backend="arm", fallback=False, threads=threads).run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())

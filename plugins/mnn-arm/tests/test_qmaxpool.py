"""MaxPool on uint8 and int8 (csrc/qlinear.c) against the reference backend, exactly: strides 1 and 2
on rows long enough for the 16-wide NEON steps and their tails, odd sizes, asymmetric and SAME padding,
ceil_mode, dilation, values at both ends of the type; 1 and 3 threads. Then a post-training-quantized
CNN with a MaxPool between its layers runs whole on Arm."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_arm_bit_exact, needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(53)

WINDOWS = [
    ((1, 3, 9, 53), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ((2, 4, 13, 71), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 5, 15, 37), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 11, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 0, 1]}),
    ((1, 3, 9, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 9, 40), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((2, 1, 5, 5), {"kernel_shape": [5, 5], "auto_pad": "VALID"}),
    ((1, 7, 1, 1), {"kernel_shape": [1, 1]}),
]
CASES = [(dt, shape, attrs) for dt in (np.uint8, np.int8) for shape, attrs in WINDOWS]


def _ints(dtype, shape):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, int(info.max) + 1, shape).astype(dtype)
    x.flat[:: max(1, x.size // 7)] = info.min  # the lowest value must still win over padding
    return x


@needs_arm
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{np.dtype(CASES[i][0]).name}-{i}")
def test_int_maxpool_bit_exact(case):
    dtype, shape, attrs = CASES[case]
    graph, feeds = conformance_graph("MaxPool", [_ints(dtype, shape)], attrs, True)
    assert_arm_bit_exact(graph, feeds, str(attrs))


def _conv_pool_cnn():
    from mnn_core import GraphBuilder

    rng = np.random.default_rng(5)
    g = GraphBuilder("qpool")
    x = g.input("x", (1, 3, 23, 21), "float32")

    def conv(v, c, o):
        w = g.const((rng.standard_normal((o, c, 3, 3)) * 0.3).astype(np.float32))
        b = g.const((rng.standard_normal(o) * 0.1).astype(np.float32))
        return g.Relu(g.Conv(v, w, b, pads=[1, 1, 1, 1]))

    h = g.MaxPool(conv(x, 3, 8), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    g.output(conv(h, 8, 8), "y")
    return g.build()


@needs_arm
def test_quantized_cnn_with_maxpool_runs_whole():
    """ResNet's stem: the uint8 MaxPool keeps the int8 graph on Arm with fallback=False."""
    from mnn_core import Session
    from mnn_core.quant.ptq import quantize

    calib = {"x": np.random.default_rng(6).standard_normal((4, 3, 23, 21)).astype(np.float32)}
    qgraph = quantize(_conv_pool_cnn(), calib, progress=False).graph
    pools = [n for n in qgraph.nodes if n.op == "MaxPool"]
    assert pools and qgraph.infer()[pools[0].inputs[0]].dtype == "uint8"
    x = {"x": calib["x"][:1]}
    want = Session(qgraph, backend="reference").run(x)["y"]
    sess = Session(qgraph, backend="arm", fallback=False)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    np.testing.assert_array_equal(sess.run(x)["y"], want)

"""A 3x3 stride-1 pad-1 QLinearConv with weights without a zero point reads its input in place on the sdot
path where that pays (_arm_int8.pxi's _reads_in_place; arm_q_conv3x3_tiles: padded channel quads, no im2col):
bit-exact with the reference backend for uint8 / int8 inputs, int8 weights (zero point 0) and uint8 weights
(zero point 128), channel counts that are not multiples of 4 (the quads' padding channels), planes of one row
up to several chunks of the padded grid, 1 and 3 threads; the other cases keep im2col."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_arm_bit_exact, needs_arm

from mnn_core.backend import PrepareContext
from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(38)
ATTRS = {
    "kernel_shape": [3, 3],
    "auto_pad": "NOTSET",
    "group": 1,
    "pads": [1, 1, 1, 1],
    "strides": [1, 1],
    "dilations": [1, 1],
}


def _case(n, c, o, h, w, x_dtype, w_dtype, bias, zw=None):
    xi, wi = np.iinfo(x_dtype), np.iinfo(w_dtype)
    x = RNG.integers(xi.min, xi.max + 1, (n, c, h, w)).astype(x_dtype)
    weight = RNG.integers(wi.min, wi.max + 1, (o, c, 3, 3)).astype(w_dtype)
    zx = np.dtype(x_dtype).type(121 if x_dtype == np.uint8 else -7)
    sw = RNG.uniform(0.0005, 0.002, o).astype(np.float32)
    if zw is None:
        zw = np.full(o, 128 if w_dtype == np.uint8 else 0, w_dtype)
    zy = np.dtype(x_dtype).type(117 if x_dtype == np.uint8 else 3)
    ins = [x, np.float32(0.03), zx, weight, sw, np.asarray(zw, w_dtype), np.float32(0.4), zy]
    if bias:
        ins.append(RNG.integers(-3000, 3000, o).astype(np.int32))
    return ins


# (n, c, o, h, w, x dtype, w dtype, bias)
CASES = [
    (1, 3, 16, 9, 13, np.uint8, np.int8, True),  # one quad, one padding channel
    (2, 17, 32, 7, 9, np.int8, np.int8, False),  # two images, 5 quads
    (1, 16, 8, 1, 8, np.uint8, np.uint8, True),  # one row
    (1, 5, 24, 20, 31, np.uint8, np.int8, True),  # 2 chunks of the grid (rows cut between them)
    (1, 32, 16, 40, 37, np.int8, np.uint8, True),  # 4 chunks
    (1, 8, 12, 2, 9, np.int8, np.int8, False),  # 12 rows: a half-empty row panel
    (1, 40, 40, 5, 17, np.uint8, np.int8, True),  # more output channels, as many inputs
    (1, 8, 48, 3, 64, np.int8, np.int8, True),  # widening on a wide plane
]
# im2col's: a narrow plane; more than 32 output channels from fewer inputs on a plane under 64 wide; weight
# zero points
KEPT = [
    (1, 16, 8, 1, 1, np.uint8, np.uint8, True, None),
    (1, 16, 40, 6, 20, np.uint8, np.int8, True, None),
    (1, 8, 16, 6, 9, np.uint8, np.uint8, True, RNG.integers(100, 150, 16)),
]


def _name(graph) -> str:
    from mnn_arm._common import KERNELS

    infos = graph.infer()
    node = next(n for n in graph.nodes if n.op == "QLinearConv")
    ins = [infos[name] for name in node.inputs]
    outs = [infos[name] for name in node.outputs]
    return KERNELS["QLinearConv"].impl(node, ins, outs, graph.initializers, PrepareContext()).name


@needs_arm
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: "n{}-c{}-o{}-{}x{}".format(*CASES[i][:5]))
def test_read_in_place_bit_exact(case):
    from mnn_arm.paths import runnable

    graph, feeds = conformance_graph("QLinearConv", _case(*CASES[case]), ATTRS, True)
    # without sdot (cortex-a53) the plain int8 path keeps im2col, and must be as exact
    assert _name(graph).startswith("arm.QLinearConv.in_place") == runnable("int8_dot")
    assert_arm_bit_exact(graph, feeds, f"case {case}")


@needs_arm
@pytest.mark.parametrize("case", range(len(KEPT)))
def test_im2col_kept(case):
    graph, feeds = conformance_graph("QLinearConv", _case(*KEPT[case]), ATTRS, True)
    assert not _name(graph).startswith("arm.QLinearConv.in_place")
    assert_arm_bit_exact(graph, feeds, f"kept {case}")

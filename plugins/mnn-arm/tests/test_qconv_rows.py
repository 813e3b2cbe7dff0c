"""A 1x1 QLinearConv of 1x1 images (mnn_core.quant's Linear on [N, K] tokens, as [N, K, 1, 1]) runs as one
QLinearMatMul with the images as rows (ops_conv._tokens_as_rows): bit-exact with the reference backend for
uint8 / int8 inputs and weights, per-tensor and per-channel weight parameters (uint8 weights with zero points
per channel), with and without a bias, one image and many, odd channel counts, 1 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_arm_bit_exact, needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(53)
ATTRS = {"group": 1, "pads": [0, 0, 0, 0], "strides": [1, 1], "dilations": [1, 1]}


def _case(n, c, o, x_dtype, w_dtype, per_channel, bias):
    xi, wi = np.iinfo(x_dtype), np.iinfo(w_dtype)
    x = RNG.integers(xi.min, xi.max + 1, (n, c, 1, 1)).astype(x_dtype)
    w = RNG.integers(wi.min, wi.max + 1, (o, c, 1, 1)).astype(w_dtype)
    zx = np.dtype(x_dtype).type(121 if x_dtype == np.uint8 else -7)
    if per_channel:
        sw = RNG.uniform(0.002, 0.02, o).astype(np.float32)
        zw = RNG.integers(100, 150, o).astype(w_dtype) if w_dtype == np.uint8 else np.zeros(o, w_dtype)
    else:
        sw, zw = np.float32(0.01), np.dtype(w_dtype).type(128 if w_dtype == np.uint8 else 0)
    zy = np.dtype(x_dtype).type(117 if x_dtype == np.uint8 else 3)
    ins = [x, np.float32(0.03), zx, w, sw, zw, np.float32(0.4), zy]
    if bias:
        ins.append(RNG.integers(-3000, 3000, o).astype(np.int32))
    return ins


CASES = [
    (37, 96, 20, np.uint8, np.int8, True, True),
    (256, 13, 5, np.int8, np.int8, True, False),
    (1, 200, 17, np.uint8, np.uint8, True, True),
    (12, 7, 33, np.int8, np.uint8, False, True),
    (9, 384, 96, np.uint8, np.int8, False, False),
    # whole 8-row panels of A with k beyond the last 16 (45, 100) and output columns past the last block of 16
    (24, 45, 50, np.uint8, np.uint8, True, True),
    (16, 100, 48, np.int8, np.int8, True, True),
]


@needs_arm
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"n{CASES[i][0]}-c{CASES[i][1]}-o{CASES[i][2]}")
def test_one_pixel_images_as_rows_bit_exact(case):
    graph, feeds = conformance_graph("QLinearConv", _case(*CASES[case]), ATTRS, True)
    assert_arm_bit_exact(graph, feeds, f"case {case}")

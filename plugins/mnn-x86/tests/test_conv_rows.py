"""Convolutions whose rows are independent (kh = 1, vertical stride 1, no vertical padding: the 1-D
ones) over a batch, which the transposed orientation runs as one image of N * H rows (op_conv.c:
merge_h): against the reference on odd sizes, 1-D and 2-D, with horizontal padding, strides and
dilations, bias and a fused activation, the orientation chosen by the rule and forced, 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)

CASES = [
    # x shape, (O, kw), attrs
    ((8, 32, 1, 21), (200, 7), {}),
    ((3, 5, 1, 9), (7, 3), {"pads": [0, 1, 0, 2], "activation": "relu"}),
    ((2, 6, 3, 11), (9, 2), {"strides": [1, 2]}),
    ((5, 4, 2, 13), (17, 3), {"dilations": [1, 2], "pads": [0, 2, 0, 1]}),
    ((4, 3, 1, 40), (33, 5), {"activation": "sigmoid"}),
    ((2, 8, 1, 6), (5, 1), {"strides": [1, 2]}),  # a 1x1 of stride 2: not the plain GEMM
    ((7, 9, 1, 14), (11, 4), {"pads": [0, 1, 0, 0]}),  # 84 merged pixels, a left pad only
]


def _conv(x_shape, o, kw, attrs, rng, bias=True):
    c = x_shape[1]
    w = (rng.standard_normal((o, c, 1, kw)) * 0.3).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    full = {"kernel_shape": [1, kw], "strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1}
    full.update(attrs)
    full["auto_pad"] = "NOTSET"
    g = Graph(name="conv-rows")
    g.inputs = {"x": TensorInfo(x_shape, "float32")}
    g.initializers["w"] = w
    ins = ["x", "w"]
    if bias:
        g.initializers["b"] = b
        ins.append("b")
    g.nodes.append(Node("Conv", ins, ["y"], full, name="conv"))
    g.outputs = ["y"]
    return g, w, b, full


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("conv_t", ["auto", "on"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_batched_rows_match_reference(rng, isa, conv_t, threads, case):
    x_shape, (o, kw), attrs = CASES[case]
    g, w, b, full = _conv(x_shape, o, kw, attrs, rng, bias=case % 2 == 0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    want = run_reference("Conv", [x, w] + ([b] if b is not None else []), full)[0]
    options = {"x86.isa": isa, "x86.conv_t": conv_t, "x86.direct": "off"}
    sess = Session(g, backend="x86", fallback=False, optimize=False, threads=threads, options=options)
    for _ in range(2):  # the second run reuses the scratch the first one filled
        got = sess.run({"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

"""x86 int8 QLinearConv, every ISA this CPU runs, bit-exact against the reference (docs/QUANT.md)."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86 import isa as x86_isa

import mnn_core as mnn
from mnn_core.graph.builder import GraphBuilder

ISAS = x86_isa.supported()

CASES = [  # n, c, h, w, o, k, group, stride, pad, dilation, per_channel, bias
    (1, 3, 9, 7, 5, 3, 1, 1, 1, 1, True, True),
    (2, 6, 13, 11, 17, 5, 1, 2, 2, 1, True, True),
    (1, 8, 6, 6, 8, 3, 8, 1, 1, 1, True, True),  # depthwise
    (3, 4, 10, 10, 6, 3, 2, 1, 0, 2, False, False),  # groups, dilation, per-tensor, no bias
    (1, 1, 28, 28, 6, 5, 1, 1, 2, 1, True, True),  # LeNet's first layer
    (5, 400, 1, 1, 120, 1, 1, 1, 0, 1, True, True),  # fully connected form
    (1, 33, 1, 1, 7, 1, 1, 1, 0, 1, True, False),
    (300, 19, 1, 1, 9, 1, 1, 1, 0, 1, True, True),  # more images than one column block
]


def _graph(rng, n, c, h, w, o, k, group, stride, pad, dil, per_channel, bias, mult_half=False):
    b = GraphBuilder("q")
    x = b.input("x", (n, c, h, w), "uint8")
    wq = rng.integers(-127, 128, (o, c // group, k, k)).astype(np.int8)
    if mult_half:  # multipliers of exactly 0.5 and 0.25: many products end in .5, rounding ties
        sw = np.where(np.arange(o) % 2 == 0, 0.5, 0.25).astype(np.float32) if per_channel else np.float32(0.5)
        sx, sy = np.float32(1.0), np.float32(1.0)
    else:
        sw = rng.uniform(0.001, 0.02, o).astype(np.float32) if per_channel else np.float32(0.01)
        sx, sy = np.float32(0.03), np.float32(rng.uniform(0.05, 0.5))
    ins = [x, b.const(sx), b.const(np.uint8(rng.integers(0, 256))), b.const(wq), b.const(sw), b.const(np.int8(0)),
           b.const(sy), b.const(np.uint8(rng.integers(0, 256)))]
    if bias:
        ins.append(b.const(rng.integers(-3000, 3000, o).astype(np.int32)))
    y = b.QLinearConv(*ins, strides=[stride, stride], pads=[pad] * 4, dilations=[dil, dil], group=group)
    b.output(y, "y")
    return b.build()


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("case", CASES, ids=[str(c[:10]) for c in CASES])
@pytest.mark.parametrize("ties", [False, True], ids=["random", "ties"])
def test_qlinearconv_bit_exact(isa, case, ties):
    rng = np.random.default_rng(sum(case[:6]))
    graph = _graph(rng, *case, mult_half=ties)
    x = rng.integers(0, 256, case[:4]).astype(np.uint8)
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    session = mnn.Session(graph, backend="x86", fallback=False, options={"x86.isa": isa})
    assert session.plan.backends() == {"x86": 1}
    got = session.run({"x": x})["y"]
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


def test_int8_kernel_declines_what_it_does_not_run():
    b = GraphBuilder("q")
    x = b.input("x", (1, 2, 5, 5), "uint8")
    w = b.const(np.ones((3, 2, 3, 3), np.int8))
    y = b.QLinearConv(x, b.const(np.float32(0.1)), b.const(np.uint8(0)), w, b.const(np.float32(0.1)),
                      b.const(np.int8(0)), b.const(np.float32(0.1)), b.const(np.int8(0)))  # int8 output
    b.output(y, "y")
    with pytest.raises(Exception, match="QLinearConv"):
        mnn.Session(b.build(), backend="x86", fallback=False)

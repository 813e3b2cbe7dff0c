"""A DequantizeLinear, the element-wise float ops it alone feeds and the QuantizeLinear after them run as
one byte table on Arm (arm.QLinearLUT, mnn_arm/qlut.py): HardSwish, a SiLU (Sigmoid and Mul), a chain
with constant scalars; uint8 and int8 on either side; every one of the 256 input bytes, odd sizes (the
16-byte steps' tails), 1 and 3 threads; bit-exact with the reference backend. Without the QuantizeLinear,
one float32 value read outside is the output (arm.DequantizeLUT). Groups that must stay apart (two values
read outside, per-axis scales) are not fused and stay right."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

RNG = np.random.default_rng(7)
LUT = "arm.QLinearLUT"


def _graph(body, shape, in_dtype, out_dtype, in_axis_scales=False):
    """x (in_dtype) -> DequantizeLinear -> body(builder, float value) -> QuantizeLinear (out_dtype) -> y."""
    from mnn_core import GraphBuilder

    g = GraphBuilder("qlut")
    x = g.input("x", shape, in_dtype)
    if in_axis_scales:
        scale = g.const(RNG.uniform(0.01, 0.05, shape[1]).astype(np.float32))
        zp = g.const(np.full(shape[1], 3, np.dtype(in_dtype)))
    else:
        scale, zp = g.const(np.float32(0.043)), g.const(np.dtype(in_dtype).type(7 if in_dtype == "uint8" else -5))
    xf = g.DequantizeLinear(x, scale, zp)
    y = body(g, xf)
    zy = np.dtype(out_dtype).type(121 if out_dtype == "uint8" else 9)
    g.output(g.QuantizeLinear(y, g.const(np.float32(0.027)), g.const(zy)), "y")
    return g.build()


def _silu(g, v):
    return g.Mul(v, g.Sigmoid(v))


def _chain(g, v):  # (x * 0.5 + 1) clipped, then its HardSigmoid and a constant subtraction
    c = g.Clip(g.Add(g.Mul(v, g.const(np.float32(0.5))), g.const(np.float32(1.0))), min=-1.0, max=2.5)
    return g.Sub(g.HardSigmoid(c), g.const(np.float32(0.25)))


BODIES = {"hardswish": lambda g, v: g.HardSwish(v), "silu": _silu, "chain": _chain}


def _feeds(shape, dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max + 1, shape).astype(dtype)
    x.reshape(-1)[: min(256, x.size)] = np.arange(256, dtype=np.uint8).view(dtype)[: min(256, x.size)]
    return {"x": x}


@needs_arm
@pytest.mark.parametrize("shape", [(1, 7, 13, 11), (2, 16, 45, 23), (300,), (5,)])
@pytest.mark.parametrize("dtypes", [("uint8", "uint8"), ("int8", "int8"), ("uint8", "int8")])
@pytest.mark.parametrize("body", list(BODIES))
def test_group_is_one_table_bit_exact(body, dtypes, shape):
    from mnn_core import Session

    graph = _graph(BODIES[body], shape, *dtypes)
    feeds = _feeds(shape, np.dtype(dtypes[0]))
    want = Session(graph, backend="reference").run(dict(feeds))["y"]
    for threads in (1, 3):
        sess = Session(graph, backend="arm", fallback=False, threads=threads)
        assert [s for s in sess.plan.fused if s.count("+") >= 2], sess.plan.fused
        got = sess.run(dict(feeds))["y"]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{body} {dtypes} threads={threads}")


def _read_outside(g, v):  # the dequantized value also feeds an Add outside the group
    return g.Add(g.HardSwish(v), g.Relu(g.Neg(g.Exp(g.Max(v, g.input("z", (1, 6, 9, 7), "float32"))))))


def _float_out_graph(case, shape, in_dtype):
    """x -> DequantizeLinear -> element-wise ops whose float output is read outside: a SiLU feeding a global
    pooling and the product with its gate (EfficientNet's squeeze-excite), or a HardSwish that is both a graph
    output and quantized again."""
    from mnn_core import GraphBuilder

    g = GraphBuilder("dqlut")
    x = g.input("x", shape, in_dtype)
    zp = np.dtype(in_dtype).type(11 if in_dtype == "uint8" else -4)
    v = g.DequantizeLinear(x, g.const(np.float32(0.061)), g.const(zp))
    if case == "silu-se":
        h = _silu(g, v)
        y = g.Mul(h, g.Sigmoid(g.GlobalAveragePool(h)))
        g.output(h, "h")
        g.output(y, "y")
    else:
        h = g.HardSwish(v)
        y = g.QuantizeLinear(h, g.const(np.float32(0.03)), g.const(np.uint8(128)))
        g.output(h, "h")  # renames h in the QuantizeLinear too
        g.output(y, "y")
    return g.build()


@needs_arm
@pytest.mark.parametrize("shape", [(1, 7, 13, 11), (2, 16, 45, 23), (1, 3, 1, 5)])
@pytest.mark.parametrize("in_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("case", ["silu-se", "output-and-quantized"])
def test_float_output_is_one_table_bit_exact(case, in_dtype, shape):
    """arm.DequantizeLUT: 256 float32 by input byte, written as the reference computes them (h, exactly;
    what the squeeze-excite's float ops make of it within the fp32 path's bound)."""
    from mnn_core import Session

    graph = _float_out_graph(case, shape, in_dtype)
    feeds = _feeds(shape, np.dtype(in_dtype))
    want = Session(graph, backend="reference").run(dict(feeds))
    for threads in (1, 3):
        sess = Session(graph, backend="arm", fallback=False, threads=threads)
        assert [s for s in sess.plan.fused if s.count("+") >= 1], sess.plan.fused
        got = sess.run(dict(feeds))
        for key, ref in want.items():
            assert got[key].dtype == ref.dtype
            if case == "silu-se" and key == "y":
                np.testing.assert_allclose(got[key], ref, rtol=1e-5, atol=1e-6, err_msg=f"{case} threads={threads}")
            else:
                np.testing.assert_array_equal(got[key], ref, err_msg=f"{case} {key} threads={threads}")


@needs_arm
@pytest.mark.parametrize("case", ["read-outside", "per-axis"])
def test_what_is_not_fused(case):
    """Two of the group's values read outside (no one output), or scales per axis (no one table)."""
    from mnn_core import Session

    shape = (1, 6, 9, 7)
    if case == "per-axis":
        graph = _graph(BODIES["silu"], shape, "uint8", "uint8", in_axis_scales=True)
    else:
        graph = _graph(_read_outside, shape, "uint8", "uint8")
    feeds = _feeds(shape, np.uint8)
    if case == "read-outside":
        feeds["z"] = RNG.standard_normal(shape).astype(np.float32)
    want = Session(graph, backend="reference").run(dict(feeds))
    sess = Session(graph, backend="arm", fallback=False)
    assert sess.plan.fused == {}, sess.plan.fused
    got = sess.run(dict(feeds))
    for key, ref in want.items():
        np.testing.assert_array_equal(got[key], ref, err_msg=case)

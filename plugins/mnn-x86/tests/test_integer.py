"""MatMulInteger and ConvInteger on x86 (ops_integer.py) against the reference backend, to the bit:
uint8 and int8 operands, every zero-point form (absent, scalar, per row of A, per column of B, per
output channel of W; constant or computed), batch broadcasting, groups, strides, pads, dilations, odd
sizes, batch 1 and 3, one and two threads; the extreme operands and zero points (0/255, -128/127) on
each of the u8 x s8 tiles (csrc/integer/qgemm.c: VNNI, AVX2, plain C) this CPU runs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, one_op_graph
from mnn_x86 import _integer

from mnn_core.ops import run_reference
from mnn_core.session import Session

RANGES = {"uint8": (0, 256), "int8": (-128, 128)}


def _q(rng, dtype, *shape):
    lo, hi = RANGES[dtype]
    return rng.integers(lo, hi, shape).astype(dtype)


def _check(op, ins, attrs, threads, constant, isa=None):
    graph, feeds = one_op_graph(op, ins, attrs, constant)
    options = {"x86.isa": isa} if isa else None
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads, options=options)
    want = run_reference(op, list(ins), attrs)[0]
    for _ in range(2):  # the second run reuses the packed operands and scratch of the first
        got = sess.run(feeds)["out"]
        assert got.dtype == np.int32 and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {attrs} {[getattr(i, 'shape', None) for i in ins]}")


def _zero_point(rng, form, dtype, n):
    """A zero point of the given form: None, a scalar, or n values."""
    if form == "none":
        return None
    return _q(rng, dtype, n) if form == "vector" else _q(rng, dtype)


# -- MatMulInteger -----------------------------------------------------------------------------------

SHAPES = [
    ((5, 7), (7, 3)),
    ((1, 33), (33, 65)),
    ((3, 6, 13), (13, 9)),
    ((2, 1, 4, 40), (3, 40, 6)),
    ((9,), (9, 5)),
    ((4, 9), (9,)),
    ((70, 100), (100, 130)),
    ((12, 1024), (1024, 300)),
    ((13, 5), (5, 64)),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "a_dtype,b_dtype", [("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8"), ("int8", "uint8")]
)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: "x".join(map(str, s[0])) + "_" + "x".join(map(str, s[1])))
def test_matmul_integer(rng, shapes, a_dtype, b_dtype, threads):
    (sa, sb) = shapes
    a, b = _q(rng, a_dtype, *sa), _q(rng, b_dtype, *sb)
    m, n = (sa[-2] if len(sa) > 1 else 1), (sb[-1] if len(sb) > 1 else 1)
    forms = [("none", "none"), ("scalar", "scalar"), ("vector", "vector"), ("scalar", "vector")]
    for za_form, zb_form in forms:
        za = _zero_point(rng, za_form, a_dtype, m)
        zb = _zero_point(rng, zb_form, b_dtype, n)
        ins = [a, b, za, zb]
        while ins[-1] is None:
            ins.pop()
        if zb is None and za is not None:
            ins = [a, b, za]
        for constant in ((1, 2, 3), (), (1,)):  # weights and zero points packed at prepare, or all at run
            _check("MatMulInteger", ins, {}, threads, constant)


def test_matmul_integer_absent_a_zero_point(rng):
    """b_zero_point alone (a_zero_point left out as an empty name)."""
    a, b = _q(rng, "uint8", 6, 11), _q(rng, "uint8", 11, 7)
    _check("MatMulInteger", [a, b, None, _q(rng, "uint8", 7)], {}, 1, (1, 3))


def test_matmul_integer_extremes(rng):
    """The largest products (255 * 255 and (-128 - 127) * 255) over a long K stay exact."""
    a = np.full((3, 4099), 255, np.uint8)
    b = np.full((4099, 5), -128, np.int8)
    _check("MatMulInteger", [a, b, np.uint8(0), np.int8(127)], {}, 2, (1, 3))


# -- ConvInteger -------------------------------------------------------------------------------------

CONVS = [
    ((1, 3, 9, 11), (5, 3, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((3, 4, 8, 7), (6, 2, 3, 2), {"group": 2, "strides": [2, 1], "pads": [1, 0, 2, 1]}),
    ((1, 6, 10, 10), (6, 1, 3, 3), {"group": 6, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((2, 24, 7, 9), (17, 24, 1, 1), {}),
    ((1, 1, 16, 37), (24, 1, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 5, 6, 6), (3, 5, 2, 2), {"auto_pad": "SAME_UPPER"}),
    ((1, 9, 5, 5), (70, 9, 3, 3), {"pads": [1, 1, 1, 1], "strides": [1, 2]}),
    ((1, 24, 16, 70), (13, 24, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 7, 11, 13), (8, 7, 5, 3), {"pads": [2, 0, 1, 2], "strides": [2, 3], "dilations": [1, 2]}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_dtype,w_dtype", [("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8")])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv_integer(rng, case, x_dtype, w_dtype, threads):
    xs, ws, attrs = CONVS[case]
    x, w = _q(rng, x_dtype, *xs), _q(rng, w_dtype, *ws)
    for zx_form, zw_form in [("none", "none"), ("scalar", "scalar"), ("scalar", "vector"), ("none", "vector")]:
        zx = _zero_point(rng, zx_form, x_dtype, 1)
        zw = _zero_point(rng, zw_form, w_dtype, ws[0])
        ins = [x, w, zx, zw] if zw is not None else ([x, w, zx] if zx is not None else [x, w])
        for constant in ((1, 2, 3), (), (1,)):
            _check("ConvInteger", ins, dict(attrs), threads, constant)


# -- the tiles at each ISA level, extreme values ------------------------------------------------------

EXTREMES = {"uint8": (0, 255), "int8": (-128, 127)}
SIGNS = [("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8"), ("int8", "uint8")]


def _extreme(rng, dtype, *shape):
    """Operands of only the type's two extremes (the largest products and sums), or a scalar of one."""
    lo, hi = EXTREMES[dtype]
    return np.where(rng.random(shape) < 0.5, lo, hi).astype(dtype)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("a_dtype,b_dtype", SIGNS)
def test_matmul_integer_tiles_extremes(rng, isa, a_dtype, b_dtype):
    for m, k, n in [(7, 300, 67), (1, 9, 3), (13, 4099, 5)]:
        a, b = _extreme(rng, a_dtype, m, k), _extreme(rng, b_dtype, k, n)
        for za, zb in [(EXTREMES[a_dtype][0], EXTREMES[b_dtype][1]), (EXTREMES[a_dtype][1], EXTREMES[b_dtype][0])]:
            ins = [a, b, np.array(za, a_dtype), np.array(zb, b_dtype)]
            _check("MatMulInteger", ins, {}, 1, (1, 3), isa)
        ins = [a, b, _extreme(rng, a_dtype, m), _extreme(rng, b_dtype, n)]
        _check("MatMulInteger", ins, {}, 2, (1,), isa)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("x_dtype,w_dtype", SIGNS)
def test_conv_integer_tiles_extremes(rng, isa, x_dtype, w_dtype):
    for case in (0, 1, 6, 7, 8):
        xs, ws, attrs = CONVS[case]
        x, w = _extreme(rng, x_dtype, *xs), _extreme(rng, w_dtype, *ws)
        for zx, zw in [(EXTREMES[x_dtype][0], EXTREMES[w_dtype][1]), (EXTREMES[x_dtype][1], EXTREMES[w_dtype][0])]:
            ins = [x, w, np.array(zx, x_dtype), np.array(zw, w_dtype)]
            _check("ConvInteger", ins, dict(attrs), 1, (1, 3), isa)
        ins = [x, w, np.array(EXTREMES[x_dtype][1], x_dtype), _extreme(rng, w_dtype, ws[0])]
        _check("ConvInteger", ins, dict(attrs), 2, (), isa)


def test_qgemm_path_follows_isa():
    """The tiles follow the session's ISA level: plain C at scalar, AVX2 or VNNI above (as the CPU runs)."""
    assert _integer.qgemm_path("scalar") == "scalar"
    from mnn_x86 import isa as x86_isa

    if "avx2" in x86_isa.supported():
        assert _integer.qgemm_path("avx2") == "avx2"


# -- DynamicQuantizeLSTM (ops_recurrent.py, csrc/recurrent/quant.c on the tiles above) ---------------------


def _dq_lstm_inputs(rng, seq, batch, size, hidden, dirs, per_column, dtype, states):
    cols = 4 * hidden if per_column else 1
    zp = np.zeros((dirs, cols), dtype) if dtype == "int8" else np.full((dirs, cols), rng.integers(100, 150), dtype)
    x = rng.uniform(-2, 2, (seq, batch, size)).astype(np.float32)
    ins = [
        x,
        _q(rng, dtype, dirs, size, 4 * hidden),
        _q(rng, dtype, dirs, hidden, 4 * hidden),
        rng.uniform(-0.5, 0.5, (dirs, 8 * hidden)).astype(np.float32),
        None,
    ]
    state = [rng.uniform(-1, 1, (dirs, batch, hidden)).astype(np.float32) for _ in range(2)]
    ins += state if states else [None, None]
    ins.append(None)
    for _ in range(2):
        scale = rng.uniform(0.002, 0.01, (dirs, cols) if per_column else (dirs,)).astype(np.float32)
        ins += [scale, zp if per_column else zp[:, 0]]
    return ins


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("dtype,per_column", [("int8", False), ("int8", True), ("uint8", False)])
def test_dynamic_quantize_lstm(rng, dtype, per_column, direction, batch, threads):
    dirs = 2 if direction == "bidirectional" else 1
    for seq, size, hidden, states in [(5, 7, 9, True), (3, 40, 33, False), (1, 3, 4, True)]:
        ins = _dq_lstm_inputs(rng, seq, batch, size, hidden, dirs, per_column, dtype, states)
        attrs = {"hidden_size": hidden, "direction": direction}
        graph, feeds = one_op_graph("DynamicQuantizeLSTM", ins, attrs, (1, 2, 3, 8, 9, 10, 11))
        graph.nodes[0].outputs = graph.outputs = ["y", "y_h", "y_c"]
        sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)
        want = run_reference("DynamicQuantizeLSTM", list(ins), attrs)
        for _ in range(2):
            got = sess.run(feeds)
            for name, w in zip(graph.outputs, want):
                # float32 gate math against the reference's float64: a few ulp, unless an h lands on a
                # quantization boundary (then one step of R's scale), which these sizes do not hit
                np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=f"{name} {attrs} {seq}")


def _extreme_q(rng, dtype, *shape):
    """Weights where half the bytes sit at the type's ends (the tiles' widest products), half anywhere."""
    lo, hi = RANGES[dtype]
    q = _q(rng, dtype, *shape)
    ends = rng.integers(0, 2, shape).astype(bool)
    q[ends] = np.where(rng.integers(0, 2, int(ends.sum())), hi - 1, lo).astype(dtype)
    return q


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_dynamic_quantize_lstm_tiles_extremes(rng, isa, direction):
    """The quantized products on each tile path this CPU runs: 4H columns that end mid-panel or span several
    panels, inputs that end mid-word, batch 1 (the one-row tile) and batches past a tile's rows, zero points at
    the types' ends, and X all positive (its zero point 0), all negative (255) or all zero (scale 1)."""
    dirs = 2 if direction == "bidirectional" else 1
    cases = [  # seq, batch, input, hidden, weight type, zero point, X's range
        (3, 1, 13, 17, "uint8", 0, (-2, 2)),
        (2, 7, 5, 33, "uint8", 255, (0.1, 2)),
        (4, 1, 70, 70, "int8", -128, (-2, -0.1)),
        (2, 2, 3, 130, "int8", 127, (-2, 2)),
        (3, 1, 9, 5, "uint8", 128, (0, 0)),
    ]
    for seq, batch, size, hidden, dtype, zp, (xlo, xhi) in cases:
        ins = [
            rng.uniform(xlo, xhi, (seq, batch, size)).astype(np.float32),
            _extreme_q(rng, dtype, dirs, size, 4 * hidden),
            _extreme_q(rng, dtype, dirs, hidden, 4 * hidden),
            rng.uniform(-0.5, 0.5, (dirs, 8 * hidden)).astype(np.float32),
            None,
            rng.uniform(-1, 1, (dirs, batch, hidden)).astype(np.float32),
            rng.uniform(-1, 1, (dirs, batch, hidden)).astype(np.float32),
            None,
        ]
        for _ in range(2):
            ins += [rng.uniform(0.0005, 0.002, (dirs,)).astype(np.float32), np.full((dirs,), zp, dtype)]
        attrs = {"hidden_size": hidden, "direction": direction}
        graph, feeds = one_op_graph("DynamicQuantizeLSTM", ins, attrs, (1, 2, 3, 8, 9, 10, 11))
        graph.nodes[0].outputs = graph.outputs = ["y", "y_h", "y_c"]
        sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=2, options={"x86.isa": isa})
        want = run_reference("DynamicQuantizeLSTM", list(ins), attrs)
        got = sess.run(feeds)
        for name, w in zip(graph.outputs, want):
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=f"{name} {attrs} {seq} {batch}")

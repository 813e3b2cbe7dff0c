"""Element-wise math on x86 (ops_math.py, csrc/math/): every unary and binary op against the reference
backend on random inputs of odd sizes, special values (0, -0, +-inf, nan where the op defines them),
broadcasts (scalar, channel, both sides), each dtype the op takes, 1 and 2 threads, and a tensor
large enough for the threaded path."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import one_op_graph

from mnn_core.ops import run_reference
from mnn_core.session import Session

THREADS = [1, 2]
SHAPES = [(7,), (3, 5, 33), (2, 1, 4, 17)]
LARGE = (3, 100_003)  # past two grains (X86_MATH_GRAIN) of elements: the ranges run on the pool
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 1e30, -1e30]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def run_x86(op, inputs, attrs, threads, constant=()):
    graph, feeds = one_op_graph(op, inputs, attrs, constant)
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)
    outs = [sess.run(feeds)["out"] for _ in range(2)]  # a second run over the same buffers
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]


def reference(op, inputs, attrs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return run_reference(op, list(inputs), attrs)[0]


def check(op, inputs, attrs, threads, rtol=0.0, atol=0.0, constant=()):
    got = run_x86(op, inputs, attrs, threads, constant)
    want = reference(op, inputs, attrs)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if rtol == 0.0 and atol == 0.0:
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {attrs}")
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{op} {attrs}")


# -- unary floats ------------------------------------------------------------------------------------

# op: (domain low, high, attrs, float32 rtol, atol). 0/0: bit-exact (IEEE operations and rounding). The
# polynomials (csrc/math/vmath.h) are within a few float32 ulp; erf 2e-7 absolute near |x| = 1 (its
# series' rounding); tan loses a little more near its poles, where |tan| is large.
UNARY = {
    "Erf": (-5, 5, {}, 1e-6, 3e-7),
    "Sqrt": (0, 100, {}, 0, 0),
    "Reciprocal": (-10, 10, {}, 0, 0),
    "Exp": (-100, 90, {}, 1e-6, 1e-44),  # denormal results: one ulp of 1.4e-45
    "Log": (0, 1000, {}, 1e-6, 1e-7),
    "Abs": (-10, 10, {}, 0, 0),
    "Neg": (-10, 10, {}, 0, 0),
    "Floor": (-10, 10, {}, 0, 0),
    "Ceil": (-10, 10, {}, 0, 0),
    "Round": (-10, 10, {}, 0, 0),
    "Sign": (-10, 10, {}, 0, 0),
    "Sin": (-100, 100, {}, 1e-5, 1e-7),
    "Cos": (-100, 100, {}, 1e-5, 1e-7),
    "Tan": (-1.5, 1.5, {}, 1e-5, 1e-7),
    "Asin": (-1, 1, {}, 1e-6, 1e-7),
    "Acos": (-1, 1, {}, 1e-6, 1e-7),
    "Atan": (-50, 50, {}, 1e-6, 1e-7),
    "Sinh": (-89, 89, {}, 1e-6, 1e-7),
    "Cosh": (-89, 89, {}, 1e-6, 1e-7),
    "Asinh": (-1e4, 1e4, {}, 1e-6, 1e-7),
    "Acosh": (1, 1e4, {}, 1e-6, 1e-7),
    "Atanh": (-1, 1, {}, 1e-6, 1e-7),
    "Softplus": (-100, 100, {}, 1e-6, 1e-7),
    "Softsign": (-10, 10, {}, 1e-6, 0),
    "Elu": (-10, 10, {"alpha": 0.7}, 1e-6, 1e-7),
    "Selu": (-10, 10, {}, 1e-6, 1e-7),
    "Celu": (-10, 10, {"alpha": 1.3}, 1e-6, 1e-7),
    "Mish": (-30, 30, {}, 1e-6, 1e-7),
    "ThresholdedRelu": (-3, 3, {"alpha": 0.4}, 0, 0),
    "Shrink": (-3, 3, {"bias": 0.3, "lambd": 0.6}, 1e-7, 0),
}


def _floats(rng, shape, low, high, dtype):
    x = rng.uniform(low, high, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[: min(len(SPECIAL), flat.size)] = np.array(SPECIAL, dtype)[: flat.size]
    return x


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_float32(op, threads, rng):
    low, high, attrs, rtol, atol = UNARY[op]
    for shape in SHAPES:
        check(op, [_floats(rng, shape, low, high, "float32")], attrs, threads, rtol, atol)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_float32_large(op, rng):
    low, high, attrs, rtol, atol = UNARY[op]
    check(op, [_floats(rng, LARGE, low, high, "float32")], attrs, 2, rtol, atol)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_float64(op, rng):
    low, high, attrs, _, _ = UNARY[op]
    for threads in THREADS:
        check(op, [_floats(rng, (5, 67), low, high, "float64")], attrs, threads, 1e-13, 1e-300)


def test_erf_gelu_accuracy(rng):
    """Erf as BERT's GELU uses it, x/sqrt(2) on a fine grid: within 3e-7 of float64 erf everywhere."""
    x = np.linspace(-6, 6, 200_001).astype(np.float32)
    got = run_x86("Erf", [x], {}, 2)
    want = np.array([math.erf(float(v)) for v in x])
    assert np.abs(got - want).max() < 3e-7


def test_sin_cos_far_arguments(rng):
    """Past 8192 (Cephes' reduction), blocks run on libm: still within float32 rounding of float64."""
    x = rng.uniform(-1e6, 1e6, 1000).astype(np.float32)
    x[::7] = rng.uniform(-3, 3, x[::7].size)  # a block mixing near and far arguments
    for op, fn in (("Sin", np.sin), ("Cos", np.cos)):
        got = run_x86(op, [x], {}, 1)
        np.testing.assert_allclose(got, fn(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Abs", "Neg", "Sign"])
@pytest.mark.parametrize("dtype", INTS)
def test_unary_int(op, dtype, rng):
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -1000), min(info.max, 1000), (4, 37)).astype(dtype)
    x.reshape(-1)[:3] = [info.min, info.max, 0]
    for threads in THREADS:
        check(op, [x], {}, threads)


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_not(dtype, rng):
    x = rng.integers(0, 120, (3, 41)).astype(dtype)
    check("BitwiseNot", [x], {}, 1)


def test_not(rng):
    for threads in THREADS:
        check("Not", [rng.random((5, 77)) > 0.5], {}, threads)
    check("Not", [rng.random(LARGE) > 0.5], {}, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("detect", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isnan_isinf(dtype, detect, rng):
    x = _floats(rng, (4, 29), -3, 3, dtype)
    x.reshape(-1)[20::5] = np.inf
    x.reshape(-1)[21::6] = -np.inf
    check("IsNaN", [x], {}, 1)
    check("IsInf", [x], {"detect_negative": detect[0], "detect_positive": detect[1]}, 2)


# -- Clip of other dtypes (float32 is _x86's) -------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS + ["float64"])
@pytest.mark.parametrize("bounds", [(-5, 7), (None, 3), (-2, None), (4, -4), (None, None)])
def test_clip(dtype, bounds, rng):
    if np.dtype(dtype).kind == "u":
        bounds = tuple(None if b is None else abs(b) for b in bounds)
    x = rng.integers(0 if dtype.startswith("u") else -20, 20, (3, 45)).astype(dtype)
    inputs = [x] + [None if b is None else np.array(b, dtype) for b in bounds]
    for threads in THREADS:
        check("Clip", inputs, {}, threads, constant=(1, 2))


def test_clip_int_extremes():
    x = np.array([-128, -5, 0, 5, 127], "int8")
    check("Clip", [x, np.array(-128, "int8"), np.array(127, "int8")], {}, 1, constant=(1, 2))
    check("Clip", [x, np.array(-3, "int8")], {}, 1, constant=(1,))


# -- binary --------------------------------------------------------------------------------------------

# same shape, scalar, channel, both sides broadcast, the second input the larger, odd sizes throughout
BROADCASTS = [
    ((3, 5, 33), (3, 5, 33)),
    ((2, 3, 7), ()),
    ((2, 3, 7), (3, 1)),
    ((1, 4, 1), (3, 1, 6)),
    ((7,), (2, 1, 7)),
    ((5, 1), (1,)),
]


def _ints(rng, shape, dtype, low=None, high=None):
    info = np.iinfo(dtype)
    low = info.min if low is None else max(low, info.min)
    high = info.max if high is None else min(high, info.max)
    return rng.integers(low, high, shape, dtype=dtype, endpoint=True)


def _values(rng, shape, dtype, low=-50, high=50):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return _ints(rng, shape, dtype, low, high)
    return _floats(rng, shape, low, high, dtype)


def check_binary(op, dtype, rng, attrs=None, rtol=0.0, atol=0.0, make=None, dtype_b=None):
    make = make or (lambda shape, dt, side: _values(rng, shape, dt))
    for a, b in BROADCASTS:
        inputs = [make(a, dtype, 0), make(b, dtype_b or dtype, 1)]
        for threads in THREADS:
            check(op, inputs, attrs or {}, threads, rtol, atol)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Max", "Min"])
@pytest.mark.parametrize("dtype", INTS + ["float64"])
def test_arithmetic(op, dtype, rng):
    """Integers over their whole range: sums and products wrap as numpy's."""
    full = lambda shape, dt, side: _ints(rng, shape, dt) if dt != "float64" else _floats(rng, shape, -9, 9, dt)
    check_binary(op, dtype, rng, make=full)


@pytest.mark.parametrize("dtype", INTS + ["float64"])
def test_div(dtype, rng):
    """Integer quotients truncate toward zero; magnitudes below 2**53, where the reference's float64 is exact."""

    def make(shape, dt, side):
        if dt == "float64":
            return _floats(rng, shape, -9, 9, dt)
        x = _ints(rng, shape, dt, -(10**6), 10**6)
        return np.where(x == 0, 1, x).astype(dt) if side else x

    check_binary("Div", dtype, rng, make=make)


def test_add_large_threaded(rng):
    a, b = _ints(rng, LARGE, "int32"), _ints(rng, (LARGE[1],), "int32")
    check("Add", [a, b], {}, 2)
    check("Less", [_floats(rng, LARGE, -1, 1, "float32"), _floats(rng, (3, 1), -1, 1, "float32")], {}, 2)


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", ["float32", "float64"] + INTS)
def test_compare(op, dtype, rng):
    """Few distinct values, so that ties occur; floats with +-0, inf and nan."""
    check_binary(op, dtype, rng, make=lambda shape, dt, side: _values(rng, shape, dt, -3, 3))


@pytest.mark.parametrize("op", ["And", "Or", "Xor", "Equal"])
def test_logic(op, rng):
    check_binary(op, "bool", rng)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", INTS)
def test_bitwise(op, dtype, rng):
    check_binary(op, dtype, rng, make=lambda shape, dt, side: _ints(rng, shape, dt))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", INTS)
def test_bitshift(direction, dtype, rng):
    """Shifts from 0 past the width (0, or -1 right of a negative), negative ones as numpy's."""
    width = np.dtype(dtype).itemsize * 8

    def make(shape, dt, side):
        return _ints(rng, shape, dt, -2, width + 2) if side else _ints(rng, shape, dt)

    check_binary("BitShift", dtype, rng, {"direction": direction}, make=make)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", INTS + ["float32", "float64"])
def test_mod(fmod, dtype, rng):
    """Both signs on both sides and zero divisors (0 for integers, nan for floats, as the reference)."""

    def make(shape, dt, side):
        if np.dtype(dt).kind == "f":
            x = rng.uniform(-9, 9, shape).astype(dt)
            if side and x.size > 2:
                x.reshape(-1)[:2] = [0.0, -2.5]
            return x
        return _ints(rng, shape, dt, -20, 20)

    check_binary("Mod", dtype, rng, {"fmod": fmod}, make=make)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8"])
def test_prelu(dtype, rng):
    for shape, slope in [((2, 4, 3, 3), (4, 1, 1)), ((5, 6), (6,)), ((3, 2), (1,)), ((2, 3, 5), (2, 3, 5))]:
        inputs = [_values(rng, shape, dtype, -5, 5), _values(rng, slope, dtype, -3, 3)]
        for threads in THREADS:
            check("PRelu", inputs, {}, threads, rtol=0.0)


# Pow: float bases in double libm or powf (<= 1 ulp either way); int bases by squaring
# (the schema asks for one dtype on both sides: the importer casts a mixed exponent)
@pytest.mark.parametrize(
    "base,exponent", [("float32", "float32"), ("float64", "float64"), ("int32", "int32"), ("int64", "int64")]
)
def test_pow(base, exponent, rng):
    def make(shape, dt, side):
        if side:
            return _values(rng, shape, dt, 0, 4) if np.dtype(dt).kind in "iu" else rng.uniform(-3, 3, shape).astype(dt)
        if np.dtype(dt).kind in "iu":
            return _ints(rng, shape, dt, -9, 9)
        return rng.uniform(0.1, 5, shape).astype(dt)

    check_binary("Pow", base, rng, rtol=2e-7 if base == "float32" else 1e-15, make=make, dtype_b=exponent)


@pytest.mark.parametrize("value", [2, 3, 0.5, 1, 1.5, -1])
def test_pow_single_exponent(value, rng):
    """A single exponent of 2, 3, 0.5 or 1 takes a product or a square root (run time, so a fed one too)."""
    x = rng.uniform(-4, 4, (3, 37)).astype(np.float32)
    if value in (0.5, 1.5):
        x = np.abs(x)
    x.reshape(-1)[:4] = [0.0, np.inf, 1.0, np.nan]
    for shape in [(), (1,), (1, 1)]:
        e = np.full(shape, value, np.float32)
        check("Pow", [x, e], {}, 2, rtol=2e-7)
        check("Pow", [x, e], {}, 1, rtol=2e-7, constant=(1,))
    big = rng.uniform(0, 3, LARGE).astype(np.float32)
    check("Pow", [big, np.array(value, np.float32)], {}, 2, rtol=2e-7)

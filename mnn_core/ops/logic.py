"""Logic, bitwise and test ops: And/Or/Xor/Not, BitShift, Bitwise*, Mod,
LessOrEqual/GreaterOrEqual, IsInf, IsNaN. All broadcast like numpy."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ._util import broadcast_shape, info_like, rand, same_dtype
from .schema import Attr, OpSchema, Sample, register

_CASES = [((3, 5), (3, 5)), ((2, 3, 7), (7,)), ((1, 4, 1), (3, 1, 6)), ((0, 3), (3,)), ((17,), ())]


def _binary(name, fn, infer_dtype, samples, attrs=None, doc=""):
    def infer(ins, attrs):
        dtype = same_dtype(ins, name)
        out = infer_dtype(dtype)
        return [info_like(ins[0], broadcast_shape(ins[0].shape, ins[1].shape), out)]

    register(
        OpSchema(
            name,
            infer=infer,
            reference=lambda ins, attrs: [np.asarray(fn(ins[0], ins[1], attrs))],
            attrs=attrs or {},
            n_inputs=(2, 2),
            samples=samples,
            doc=doc,
        )
    )


def _need(kind: str, op: str):
    def check(dtype):
        ok = {
            "bool": dtype == "bool",
            "int": np.issubdtype(np.dtype(dtype), np.integer),
            "uint": np.issubdtype(np.dtype(dtype), np.unsignedinteger),
        }[kind]
        if not ok:
            raise GraphError(f"{op} takes {kind} tensors, got {dtype}")
        return dtype

    return check


def _bool_samples(rng):
    for a, b in _CASES:
        yield Sample([rng.random(a) > 0.5, rng.random(b) > 0.5], label=f"{a},{b}")


def _int_samples(dtype, low, high):
    def samples(rng):
        for a, b in _CASES:
            yield Sample(
                [rng.integers(low, high, a).astype(dtype), rng.integers(low, high, b).astype(dtype)],
                label=f"{dtype} {a},{b}",
            )

    return samples


for _name, _fn in {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}.items():
    _binary(
        _name,
        lambda a, b, attrs, fn=_fn: fn(a, b),
        lambda d, n=_name: _need("bool", n)(d) and "bool",
        _bool_samples,
        doc=f"Logical {_name} of bool tensors.",
    )

for _name, _fn in {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}.items():
    _binary(
        _name,
        lambda a, b, attrs, fn=_fn: fn(a, b),
        _need("int", _name),
        _int_samples("int32", -100, 100),
        doc=f"{_name} of integer tensors.",
    )


def _shift(a, b, attrs):
    b = b.astype(a.dtype)
    return np.left_shift(a, b) if attrs["direction"] == "LEFT" else np.right_shift(a, b)


_binary(
    "BitShift",
    _shift,
    _need("int", "BitShift"),
    _int_samples("uint8", 0, 8),
    attrs={"direction": Attr("str", "LEFT", ("LEFT", "RIGHT"))},
    doc="Shift integers left or right by the second input's bits (arithmetic shift for signed).",
)


def _mod(a, b, attrs):
    if attrs["fmod"]:
        return np.fmod(a, b).astype(a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(a, b).astype(a.dtype)  # the result has the divisor's sign, as Python's %


def _mod_samples(rng):
    for a, b in _CASES:
        x = rng.integers(-50, 50, a).astype("int64")
        y = rng.integers(1, 9, b).astype("int64") * rng.choice([-1, 1], b).astype("int64")
        yield Sample([x, y], label=f"int {a},{b}")
        yield Sample(
            [rand(rng, *a, low=-9, high=9), rand(rng, *b, low=0.5, high=3)], {"fmod": 1}, label=f"fmod {a},{b}"
        )


_binary(
    "Mod",
    _mod,
    lambda d: d,
    _mod_samples,
    attrs={"fmod": Attr("int", 0, (0, 1))},
    doc="Remainder: the divisor's sign (fmod=0, integers) or the dividend's (fmod=1, C fmod).",
)


def _compare_samples(rng):
    for a, b in _CASES:
        yield Sample([rand(rng, *a), rand(rng, *b)], label=f"{a},{b}")
    yield Sample([rng.integers(-3, 3, (4, 5)).astype("int64"), rng.integers(-3, 3, (5,)).astype("int64")])


_binary(
    "LessOrEqual",
    lambda a, b, attrs: np.less_equal(a, b),
    lambda d: "bool",
    _compare_samples,
    doc="a <= b element-wise (bool output).",
)
_binary(
    "GreaterOrEqual",
    lambda a, b, attrs: np.greater_equal(a, b),
    lambda d: "bool",
    _compare_samples,
    doc="a >= b element-wise (bool output).",
)


# -- unary -------------------------------------------------------------------------------------------


def _unary(name, fn, out_dtype, samples, attrs=None, check=None, doc=""):
    def infer(ins, attrs):
        if check:
            check(ins[0].dtype)
        return [info_like(ins[0], dtype=out_dtype(ins[0].dtype))]

    register(
        OpSchema(
            name,
            infer=infer,
            reference=lambda ins, attrs: [np.asarray(fn(ins[0], attrs))],
            attrs=attrs or {},
            samples=samples,
            inplace=out_dtype("float32") == "float32",
            doc=doc,
        )
    )


def _special_floats(rng):
    for shape in [(7,), (2, 3, 5), (0, 4)]:
        x = rand(rng, *shape, low=-3, high=3)
        if x.size:
            flat = x.reshape(-1)
            flat[::3] = np.inf
            flat[1::4] = -np.inf
            flat[2::5] = np.nan
        yield Sample([x], label=str(shape))


_unary(
    "Not",
    lambda x, attrs: np.logical_not(x),
    lambda d: "bool",
    lambda rng: (Sample([rng.random(s) > 0.5]) for s in [(7,), (3, 4, 5), (0,)]),
    check=_need("bool", "Not"),
    doc="Logical not of a bool tensor.",
)
_unary(
    "BitwiseNot",
    lambda x, attrs: np.invert(x),
    lambda d: d,
    lambda rng: (Sample([rng.integers(-100, 100, s).astype("int32")]) for s in [(7,), (3, 4, 5)]),
    check=_need("int", "BitwiseNot"),
    doc="Bitwise not of an integer tensor.",
)
_unary("IsNaN", lambda x, attrs: np.isnan(x), lambda d: "bool", _special_floats, doc="x is NaN (bool output).")


def _isinf(x, attrs):
    return (np.isposinf(x) & bool(attrs["detect_positive"])) | (np.isneginf(x) & bool(attrs["detect_negative"]))


_unary(
    "IsInf",
    _isinf,
    lambda d: "bool",
    _special_floats,
    attrs={"detect_negative": Attr("int", 1, (0, 1)), "detect_positive": Attr("int", 1, (0, 1))},
    doc="x is +inf and/or -inf (bool output).",
)

"""Element-wise math on x86 (_math.pyx, csrc/math/): unary functions (Erf, Sqrt, Exp, Log, trigonometry,
rounding, Softplus, Elu, Mish, ...) of float32 (vectorized polynomials), float64 (libm) and integers, and
broadcasting binary ops of every numeric dtype: Pow, Mod, PRelu, comparisons, logic and bit operations.
Add/Sub/Mul/Div/Max/Min and Clip of dtypes other than float32 come here from ops_eltwise.py."""

from __future__ import annotations

import math

import numpy as np

from mnn_core.backend import KernelSpec
from mnn_core.backend.kit.layout import collapse_broadcast
from mnn_core.graph.ir import DTYPES

from . import _math
from ._common import register, static_shape

MAX_DIMS = 8  # MNN_MAX_DIMS of the C ABI
FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMERIC = FLOATS + INTS

#: enum x86_math_unary in csrc/math/mathops.h, in order
UNARY_KINDS = (
    "Erf",
    "Sqrt",
    "Reciprocal",
    "Exp",
    "Log",
    "Abs",
    "Neg",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Softplus",
    "Softsign",
    "Elu",
    "Selu",
    "Celu",
    "Mish",
    "ThresholdedRelu",
    "Shrink",
    "Not",
    "IsNaN",
    "IsInf",
    "BitwiseNot",
    "Clip",
)
#: enum x86_math_binary, in order ("FMod" is Mod with fmod=1, "BitShiftLeft"/"Right" BitShift's directions)
BINARY_KINDS = (
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Max",
    "Min",
    "Mod",
    "FMod",
    "Pow",
    "PRelu",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitShiftLeft",
    "BitShiftRight",
)


def dtype_code(dtype: str) -> int:
    """The mnn_dtype of a dtype name (abi.h numbers them in graph.ir.DTYPES' order)."""
    return DTYPES.index(dtype)


def _size(dtype: str) -> int:
    return np.dtype(dtype).itemsize


# -- unary ---------------------------------------------------------------------------------------------


def _unary_attrs(node) -> tuple:
    """(a, b, c, ia, ib) of x86_math_params for an op's attributes."""
    a = node.attrs
    if node.op == "Selu":
        return (float(a["alpha"]), float(a["gamma"]), 0.0, 0, 0)
    if node.op == "Shrink":
        return (float(a["bias"]), float(a["lambd"]), 0.0, 0, 0)
    if node.op == "IsInf":
        return (0.0, 0.0, 0.0, int(a["detect_negative"]), int(a["detect_positive"]))
    if "alpha" in a:  # Elu, Celu, ThresholdedRelu
        return (float(a["alpha"]), 0.0, 0.0, 0, 0)
    return (0.0, 0.0, 0.0, 0, 0)


def _prepare_unary(node, ins, outs, constants, ctx, isa, attrs=None):
    dtype = ins[0].dtype
    return _math.unary(
        isa,
        ctx.threads,
        f"x86.{node.op}",
        UNARY_KINDS.index(node.op),
        dtype_code(dtype),
        _size(dtype),
        _size(outs[0].dtype),
        attrs or _unary_attrs(node),
    )


def _unary_supports(node, ins):
    code = dtype_code(ins[0].dtype)
    return True if _math.has_unary(UNARY_KINDS.index(node.op), code) else f"no {ins[0].dtype} {node.op} on x86"


_SAME_DTYPE = {
    "Abs": NUMERIC,
    "Neg": NUMERIC,
    "Sign": NUMERIC,
    "BitwiseNot": INTS,
    "Not": ("bool",),
    "IsNaN": FLOATS,
    "IsInf": FLOATS,
}
for _op in UNARY_KINDS[: UNARY_KINDS.index("Clip")]:
    _dtypes = _SAME_DTYPE.get(_op, FLOATS)
    register(
        KernelSpec(
            _op, dtypes=_dtypes, inplace=_op not in ("IsNaN", "IsInf"), supports=_unary_supports, efficiency=0.5
        ),
        _prepare_unary,
    )


def _bound(value, dtype: str, low: bool):
    """A Clip bound as x86_math_params holds it: a float (NaN: no bound), or an int within the dtype."""
    if np.dtype(dtype).kind == "f":
        v = float(value)
        return (-math.inf if low else math.inf) if math.isnan(v) else v
    info = np.iinfo(dtype)
    if isinstance(value, float) and not math.isfinite(value):
        return info.min if value < 0 else info.max  # an infinite bound: none
    return int(min(max(math.floor(value) if low else math.ceil(value), info.min), info.max))


def prepare_clip(node, ins, outs, constants, ctx, isa):
    """Clip of float64 or an integer dtype (ops_eltwise.py runs float32)."""
    dtype = ins[0].dtype
    lo, hi = _bound(node.attrs["min"], dtype, True), _bound(node.attrs["max"], dtype, False)
    if dtype == "float64":
        attrs = (float(lo), float(hi), 0.0, 0, 0)
    else:  # int64_t fields: a uint64 bound past 2**63 passes as its two's complement bits
        attrs = (0.0, 0.0, 0.0) + tuple(v - (1 << 64) if v >= 1 << 63 else v for v in (lo, hi))
    return _prepare_unary(node, ins, outs, constants, ctx, isa, attrs)


# -- binary --------------------------------------------------------------------------------------------


def _binary_kind(node) -> str:
    if node.op == "Mod":
        return "FMod" if node.attrs["fmod"] else "Mod"
    if node.op == "BitShift":
        return "BitShiftLeft" if node.attrs["direction"] == "LEFT" else "BitShiftRight"
    return node.op


def binary_supports(node, ins):
    """Whether csrc/math has the op for these dtypes and the broadcast collapses into 8 dims."""
    a, b = static_shape(ins[0]), static_shape(ins[1])
    kind = BINARY_KINDS.index(_binary_kind(node))
    if not _math.has_binary(kind, dtype_code(ins[0].dtype), dtype_code(ins[1].dtype)):
        return f"no {node.op} of {ins[0].dtype} and {ins[1].dtype} on x86"
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims after collapsing"
    return True


def prepare_binary(node, ins, outs, constants, ctx, isa):
    a, b = static_shape(ins[0]), static_shape(ins[1])
    dims, sa, sb = collapse_broadcast(static_shape(outs[0]), a, b, MAX_DIMS)
    dtypes = (ins[0].dtype, ins[1].dtype, outs[0].dtype)
    return _math.binary(
        isa,
        ctx.threads,
        f"x86.{node.op}",
        BINARY_KINDS.index(_binary_kind(node)),
        (dtype_code(dtypes[0]), dtype_code(dtypes[1])),
        tuple(_size(d) for d in dtypes),
        dims,
        sa,
        sb,
        (0.0, 0.0, 0.0, 0, 0),
    )


_BINARY_DTYPES = {
    "Pow": NUMERIC,
    "Mod": NUMERIC,
    "PRelu": NUMERIC,
    "Equal": NUMERIC + ("bool",),
    "Less": NUMERIC,
    "Greater": NUMERIC,
    "LessOrEqual": NUMERIC,
    "GreaterOrEqual": NUMERIC,
    "And": ("bool",),
    "Or": ("bool",),
    "Xor": ("bool",),
    "BitwiseAnd": INTS,
    "BitwiseOr": INTS,
    "BitwiseXor": INTS,
    "BitShift": INTS,
}
for _op, _dtypes in _BINARY_DTYPES.items():
    register(
        KernelSpec(_op, dtypes=_dtypes, supports=binary_supports, inplace=_op == "PRelu", efficiency=0.5),
        prepare_binary,
    )

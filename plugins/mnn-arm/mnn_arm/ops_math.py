"""Element-wise math on Arm (csrc/math.c) beyond the fused activations: unary float32 ops (Exp, Log,
Sqrt, Erf, ..., Elu, Selu, Mish), Not, IsNaN, broadcasting Pow, comparisons and logic, and Cast
between the numeric dtypes. In the fp16 domain they run on widened copies (half.widen)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.layout import collapse_broadcast

from . import _arm
from ._common import kernel, static_shape

#: enum arm_math_kind of csrc/move.h
UNARY = {
    "Exp": 0,
    "Log": 1,
    "Sqrt": 2,
    "Neg": 3,
    "Abs": 4,
    "Reciprocal": 5,
    "Erf": 6,
    "Floor": 7,
    "Ceil": 8,
    "Sin": 9,
    "Cos": 10,
    "Softplus": 11,
    "Elu": 12,
    "Selu": 13,
    "Mish": 14,
    "Round": 17,  # after Not (15) and IsNaN (16)
}
#: enum arm_dtype
DTYPE_CODES = {"float32": 0, "float64": 1, "int32": 2, "int64": 3, "int16": 4, "int8": 5, "uint8": 6, "bool": 7}
#: enum arm_bin2_kind
COMPARE = {"Equal": 1, "Less": 2, "Greater": 3, "LessOrEqual": 4, "GreaterOrEqual": 5}
LOGIC = {"And": 6, "Or": 7, "Xor": 8}
MAX_DIMS = 8


def _unary(node, ins, outs, constants, ctx):
    a = node.attrs
    return _arm.math(f"arm.{node.op}", UNARY[node.op], float(a.get("alpha", 0.0)), float(a.get("gamma", 0.0)))


for _op in UNARY:
    kernel(_op, inplace=True, efficiency=0.5)(_unary)


@kernel("Not", dtypes=("bool",), inplace=True, efficiency=0.5)
def prepare_not(node, ins, outs, constants, ctx):
    return _arm.math("arm.Not", 15)


@kernel(
    "IsNaN",
    dtypes=("float32", "bool"),
    efficiency=0.5,
    supports=lambda node, ins: True if ins[0].dtype == "float32" else "float32 input only",
)
def prepare_isnan(node, ins, outs, constants, ctx):
    return _arm.math("arm.IsNaN", 16)


def _broadcast(node, ins, outs):
    a, b, out = static_shape(ins[0]), static_shape(ins[1]), static_shape(outs[0])
    plan = collapse_broadcast(tuple(out), a, b, MAX_DIMS)
    if plan is None:
        raise ValueError(f"arm {node.op}: broadcast of {a} with {b} needs more than {MAX_DIMS} dims")
    return plan


def _bin_supports(dtypes):
    def supports(node, ins):
        if ins[0].dtype != ins[1].dtype or ins[0].dtype not in dtypes:
            return f"inputs of one dtype among {'/'.join(dtypes)}"
        a, b = tuple(ins[0].shape), tuple(ins[1].shape)
        if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
            return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims"
        return True

    return supports


def _bin2(kind):
    def prepare(node, ins, outs, constants, ctx):
        dims, sa, sb = _broadcast(node, ins, outs)
        return _arm.bin2(
            f"arm.{node.op}",
            kind,
            DTYPE_CODES[ins[0].dtype],
            np.dtype(ins[0].dtype).itemsize,
            np.dtype(outs[0].dtype).itemsize,
            dims,
            sa,
            sb,
        )

    return prepare


kernel("Pow", supports=_bin_supports(("float32",)), efficiency=0.5)(_bin2(0))
for _op, _kind in COMPARE.items():
    kernel(
        _op,
        dtypes=("float32", "int32", "int64", "bool"),
        supports=_bin_supports(("float32", "int32", "int64")),
        efficiency=0.5,
    )(_bin2(_kind))
for _op, _kind in LOGIC.items():
    kernel(_op, dtypes=("bool",), supports=_bin_supports(("bool",)), efficiency=0.5)(_bin2(_kind))


def _cast_supports(node, ins):
    pair = ins[0].dtype, node.attrs["to"]
    if set(pair) <= set(DTYPE_CODES):
        return True
    return f"arm casts between {'/'.join(DTYPE_CODES)} only"


@kernel("Cast", dtypes=tuple(DTYPE_CODES), supports=_cast_supports, efficiency=0.5)
def prepare_cast(node, ins, outs, constants, ctx):
    return _arm.cast("arm.Cast", DTYPE_CODES[ins[0].dtype], DTYPE_CODES[outs[0].dtype])


def _onehot_supports(node, ins):
    if ins[0].dtype not in DTYPE_CODES or ins[0].dtype == "bool":
        return f"indices of {ins[0].dtype}"
    if ins[1].dtype not in DTYPE_CODES:
        return f"values of {ins[1].dtype}"
    return True


@kernel("OneHot", dtypes=tuple(DTYPE_CODES), supports=_onehot_supports, efficiency=0.3)
def prepare_onehot(node, ins, outs, constants, ctx):
    from mnn_core.ops.helpers import normalize_axis

    idx = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(idx) + 1, "OneHot")
    return _arm.onehot(
        "arm.OneHot",
        DTYPE_CODES[ins[0].dtype],
        np.dtype(outs[0].dtype).itemsize,
        int(np.prod(idx[:axis], dtype=np.int64)),
        node.attrs["depth"],
        int(np.prod(idx[axis:], dtype=np.int64)),
    )


ML_NUMERIC = ("float32", "float64", "int32", "int64")


def _scaler_supports(node, ins):
    if ins[0].dtype not in ML_NUMERIC:
        return f"input of {ins[0].dtype}"
    width = ins[0].shape[0] if len(ins[0].shape) == 1 else (ins[0].shape[1] if len(ins[0].shape) > 1 else 1)
    if len(node.attrs["scale"]) not in (1, width) or len(node.attrs["offset"]) != len(node.attrs["scale"]):
        return "scale and offset of one value or one per feature"
    if len(ins[0].shape) > 2:
        return "[N, F] or [F] input"
    return True


@kernel("Scaler", dtypes=ML_NUMERIC, supports=_scaler_supports, efficiency=0.5)
def prepare_scaler(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    width = x[0] if len(x) == 1 else (x[1] if len(x) > 1 else 1)
    ftype = np.float64 if ins[0].dtype == "float64" else np.float32
    offset = np.broadcast_to(np.asarray(node.attrs["offset"], ftype), (width,))
    scale = np.broadcast_to(np.asarray(node.attrs["scale"], ftype), (width,))
    return _arm.scaler("arm.Scaler", DTYPE_CODES[ins[0].dtype], width, offset, scale)


@kernel(
    "Normalizer",
    dtypes=("float32",),
    efficiency=0.5,
    supports=lambda node, ins: True if len(ins[0].shape) in (1, 2) else "[N, F] or [F] input",
)
def prepare_normalizer(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    return _arm.normalizer("arm.Normalizer", {"MAX": 0, "L1": 1, "L2": 2}[node.attrs["norm"]], x[-1])


POST_TRANSFORMS = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}


def _linclass_supports(node, ins):
    if ins[0].dtype not in ML_NUMERIC or len(ins[0].shape) not in (1, 2):
        return "[N, F] or [F] numeric input"
    if node.attrs.get("classlabels_strings"):
        return "string class labels"
    if node.attrs["post_transform"] not in POST_TRANSFORMS:
        return f"post_transform {node.attrs['post_transform']}"
    return True


@kernel("LinearClassifier", dtypes=ML_NUMERIC, supports=_linclass_supports, efficiency=0.5)
def prepare_linear_classifier(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    rows, features = (1, x[0]) if len(x) == 1 else x
    a = node.attrs
    k = len(a["intercepts"]) if a["intercepts"] else len(a["coefficients"]) // features
    intercepts = a["intercepts"] if len(a["intercepts"]) == k else [0.0] * k
    coef = np.asarray(a["coefficients"], np.float64).reshape(k, features)
    post = POST_TRANSFORMS[a["post_transform"]]
    return _arm.linear_classifier(
        "arm.LinearClassifier",
        DTYPE_CODES[ins[0].dtype],
        post,
        rows,
        features,
        coef,
        intercepts,
        list(a["classlabels_ints"]),
    )

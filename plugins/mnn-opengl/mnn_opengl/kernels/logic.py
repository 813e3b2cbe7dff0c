"""Ops with bool results (compare.comp): comparisons of float32, int32, int64 or bool
tensors, And/Or/Xor/Not, IsNaN/IsInf; Where (where.comp), which picks between two
tensors by a bool condition; Cast among those dtypes (cast.comp). Bools are bytes, four
to a 32-bit word; every tensor starts on a word and is planned in whole words
(OpenGLBackend.tensor_nbytes), so a shader may write a bool output a word at a time."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit import quant
from mnn_core.backend.kit.layout import broadcast_plan, pad_to

from ..recorder import element
from . import register
from .quant import record_cast_to_bytes

COMPARE = {
    "Equal": 0,
    "Less": 1,
    "Greater": 2,
    "LessOrEqual": 3,
    "GreaterOrEqual": 4,
    "And": 5,
    "Or": 6,
    "Xor": 7,
    "Not": 8,
    "IsNaN": 9,
}
#: element kinds as elements.glsl (the backend kit's) numbers them
KINDS = {"float32": 0, "int32": 1, "int64": 2, "bool": 3}
ANY = tuple(KINDS)
WORDS = {"float32": 1, "int32": 1, "int64": 2}


def _broadcast_supports(node, ins):
    present = [i for i in ins if i is not None]
    out = tuple(np.broadcast_shapes(*(i.shape for i in present)))
    dims, _ = broadcast_plan(out, *(i.shape for i in present))
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _isinf_code(attrs) -> int:
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    return {(1, 1): 12, (1, 0): 10, (0, 1): 11}.get((pos, neg), 13)


def _record_compare(op, rec):
    a = op.inputs[0]
    b = op.inputs[1] if len(op.inputs) > 1 else a  # unary ops read the first input twice
    y = op.outputs[0]
    code = _isinf_code(op.node.attrs) if op.node.op == "IsInf" else COMPARE[op.node.op]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    params = [
        y.info.size,
        len(dims),
        code,
        KINDS[a.info.dtype],
        element(a),
        element(b),
        element(y),
        pad_to(dims, 6, 1),
        pad_to(sa, 6),
        pad_to(sb, 6),
    ]
    rec.elementwise("compare", params, [a, b], [y], -(-y.info.size // 4))


def _where_supports(node, ins):
    if ins[0].dtype != "bool" or ins[1].dtype not in WORDS:
        return f"a bool condition and float32/int32/int64 values, got {ins[0].dtype} and {ins[1].dtype}"
    return _broadcast_supports(node, ins)


def _record_where(op, rec):
    c, a, b = op.inputs
    y = op.outputs[0]
    dims, (sc, sa, sb) = broadcast_plan(y.info.shape, c.info.shape, a.info.shape, b.info.shape)
    params = [
        y.info.size,
        len(dims),
        WORDS[a.info.dtype],
        element(c),
        element(a),
        element(b),
        element(y),
        pad_to(dims, 6, 1),
        pad_to(sc, 6),
        pad_to(sa, 6),
        pad_to(sb, 6),
    ]
    rec.elementwise("where", params, [c, a, b], [y], y.info.size)


def _cast_supports(node, ins):
    to = node.attrs["to"]
    if to in KINDS and ins[0].dtype in KINDS or quant.cast_to_bytes(node, ins):
        return True
    return f"casts among float32, int32, int64 and bool, and of float32 / int32 to 8 bits, not {ins[0].dtype} to {to}"


def _record_cast(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.dtype in quant.BYTES:
        return record_cast_to_bytes(op, rec)
    params = [y.info.size, KINDS[x.info.dtype], KINDS[y.info.dtype], element(x), element(y)]
    rec.elementwise("cast", params, [x], [y], -(-y.info.size // 4))


def _float_only(node, ins):
    return True if ins[0].dtype == "float32" else f"float32 input only, got {ins[0].dtype}"


for _op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
    register(_op, _record_compare, _broadcast_supports, dtypes=ANY, efficiency=0.8)
for _op in ("And", "Or", "Xor"):
    register(_op, _record_compare, _broadcast_supports, dtypes=("bool",), efficiency=0.8)
register("Not", _record_compare, dtypes=("bool",), efficiency=0.8)
register("IsNaN", _record_compare, _float_only, efficiency=0.8)
register("IsInf", _record_compare, _float_only, efficiency=0.8)
register("Where", _record_where, _where_supports, dtypes=ANY, efficiency=0.8)
register("Cast", _record_cast, _cast_supports, dtypes=ANY + quant.BYTES, efficiency=0.8)

"""Ops with bool results (compare.comp): comparisons of float32, int32, int64 or
bool tensors, And/Or/Xor/Not, IsNaN/IsInf; Where (where.comp), which selects
between two tensors by a bool condition; and Cast among those dtypes (cast.comp). Bools are bytes, four to a
32-bit word; every tensor is planned in whole words (Backend.tensor_nbytes)."""

from __future__ import annotations

from mnn_core.backend.kit import quant
from mnn_core.backend.kit.layout import broadcast_plan, pad6
from mnn_core.backend.kit.params import pack

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
KINDS = {"float32": 0, "int32": 1, "int64": 2, "bool": 3}
ANY = tuple(KINDS)
WORDS = {"float32": 1, "int32": 1, "int64": 2}


def _supports_broadcast(node, ins):
    present = [i for i in ins if i is not None]
    import numpy as np

    out = tuple(np.broadcast_shapes(*(i.shape for i in present)))
    dims, _ = broadcast_plan(out, *(i.shape for i in present))
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _isinf_code(attrs) -> int:
    pos, neg = attrs["detect_positive"], attrs["detect_negative"]
    return {(1, 1): 12, (1, 0): 10, (0, 1): 11}.get((pos, neg), 13)


def _record_compare(op, rec):
    a = op.inputs[0]
    b = op.inputs[1] if len(op.inputs) > 1 else a  # unary ops read the first input twice
    y = op.outputs[0]
    code = _isinf_code(op.node.attrs) if op.node.op == "IsInf" else COMPARE[op.node.op]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    push = pack(y.info.size, len(dims), code, KINDS[a.info.dtype], pad6(dims, 1), pad6(sa), pad6(sb))
    rec.elementwise("compare", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, -(-y.info.size // 4))


def _where_supports(node, ins):
    if ins[0].dtype != "bool" or ins[1].dtype not in WORDS:
        return f"a bool condition and float32/int32/int64 values, got {ins[0].dtype} and {ins[1].dtype}"
    return _supports_broadcast(node, ins)


def _record_where(op, rec):
    c, x, yv = op.inputs
    out = op.outputs[0]
    dims, (sc, sx, sy) = broadcast_plan(out.info.shape, c.info.shape, x.info.shape, yv.info.shape)
    push = pack(out.info.size, len(dims), WORDS[x.info.dtype], 0, pad6(dims, 1), pad6(sc), pad6(sx), pad6(sy))
    rec.elementwise("where", [rec.tensor(c), rec.tensor(x), rec.tensor(yv), rec.output(out)], push, out.info.size)


def _cast_supports(node, ins):
    to = node.attrs["to"]
    if to in KINDS and ins[0].dtype in KINDS or quant.cast_to_bytes(node, ins):
        return True
    return f"casts among float32, int32, int64 and bool, and of float32 / int32 to 8 bits, not {ins[0].dtype} to {to}"


def _record_cast(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.dtype in quant.BYTES:
        return record_cast_to_bytes(op, rec)
    push = pack(y.info.size, KINDS[x.info.dtype], KINDS[y.info.dtype])
    rec.elementwise("cast", [rec.tensor(x), rec.output(y)], push, -(-y.info.size // 4))


def _float_only(node, ins):
    return True if ins[0].dtype == "float32" else f"float32 input only, got {ins[0].dtype}"


for _op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
    register(_op, _record_compare, _supports_broadcast, dtypes=ANY, efficiency=0.8)
for _op in ("And", "Or", "Xor"):
    register(_op, _record_compare, _supports_broadcast, dtypes=("bool",), efficiency=0.8)
register("Not", _record_compare, dtypes=("bool",), efficiency=0.8)
register("IsNaN", _record_compare, _float_only, efficiency=0.8)
register("IsInf", _record_compare, _float_only, efficiency=0.8)
register("Where", _record_where, _where_supports, dtypes=ANY, efficiency=0.8)
register("Cast", _record_cast, _cast_supports, dtypes=ANY + quant.BYTES, efficiency=0.8)

"""Ops with bool results (compare.comp): comparisons of float32, int32, int64 or
bool tensors, And/Or/Xor/Not, IsNaN/IsInf; Where (where.comp), which selects
between two tensors by a bool condition; and Cast among those dtypes (cast.comp). Bools are bytes, four to a
32-bit word; every tensor is planned in whole words (Backend.tensor_nbytes). The codes, checks and
registration are the backend kit's (kit.logic)."""

from __future__ import annotations

from mnn_core.backend.kit import quant
from mnn_core.backend.kit.layout import broadcast_plan, pad6
from mnn_core.backend.kit.logic import KINDS, VALUE_WORDS, compare_code, register_logic
from mnn_core.backend.kit.params import pack

from . import register
from .quant import record_cast_to_bytes


def _record_compare(op, rec):
    a = op.inputs[0]
    b = op.inputs[1] if len(op.inputs) > 1 else a  # unary ops read the first input twice
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    push = pack(y.info.size, len(dims), compare_code(op.node), KINDS[a.info.dtype], pad6(dims, 1), pad6(sa), pad6(sb))
    rec.elementwise("compare", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, -(-y.info.size // 4))


def _record_where(op, rec):
    c, x, yv = op.inputs
    out = op.outputs[0]
    dims, (sc, sx, sy) = broadcast_plan(out.info.shape, c.info.shape, x.info.shape, yv.info.shape)
    push = pack(out.info.size, len(dims), VALUE_WORDS[x.info.dtype], 0, pad6(dims, 1), pad6(sc), pad6(sx), pad6(sy))
    rec.elementwise("where", [rec.tensor(c), rec.tensor(x), rec.tensor(yv), rec.output(out)], push, out.info.size)


def _record_cast(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.dtype in quant.BYTES:
        return record_cast_to_bytes(op, rec)
    push = pack(y.info.size, KINDS[x.info.dtype], KINDS[y.info.dtype])
    rec.elementwise("cast", [rec.tensor(x), rec.output(y)], push, -(-y.info.size // 4))


register_logic(register, _record_compare, _record_where, _record_cast)

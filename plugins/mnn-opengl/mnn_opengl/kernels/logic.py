"""Ops with bool results (compare.comp): comparisons of float32, int32, int64 or bool
tensors, And/Or/Xor/Not, IsNaN/IsInf; Where (where.comp), which picks between two
tensors by a bool condition; Cast among those dtypes (cast.comp). Bools are bytes, four
to a 32-bit word; every tensor starts on a word and is planned in whole words
(OpenGLBackend.tensor_nbytes), so a shader may write a bool output a word at a time. The
codes, checks and registration are the backend kit's (kit.logic)."""

from __future__ import annotations

from mnn_core.backend.kit import quant
from mnn_core.backend.kit.layout import broadcast_plan, pad_to
from mnn_core.backend.kit.logic import KINDS, VALUE_WORDS, compare_code, register_logic

from ..recorder import element
from . import register
from .eltwise import broadcast_params
from .quant import record_cast_to_bytes


def _record_compare(op, rec):
    a = op.inputs[0]
    b = op.inputs[1] if len(op.inputs) > 1 else a  # unary ops read the first input twice
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    params = [y.info.size, len(dims), compare_code(op.node), KINDS[a.info.dtype]]
    params += broadcast_params(a, b, y, dims, sa, sb)
    rec.elementwise("compare", params, [a, b], [y], -(-y.info.size // 4))


def _record_where(op, rec):
    c, a, b = op.inputs
    y = op.outputs[0]
    dims, (sc, sa, sb) = broadcast_plan(y.info.shape, c.info.shape, a.info.shape, b.info.shape)
    params = [
        y.info.size,
        len(dims),
        VALUE_WORDS[a.info.dtype],
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


def _record_cast(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.dtype in quant.BYTES:
        return record_cast_to_bytes(op, rec)
    params = [y.info.size, KINDS[x.info.dtype], KINDS[y.info.dtype], element(x), element(y)]
    rec.elementwise("cast", params, [x], [y], -(-y.info.size // 4))


register_logic(register, _record_compare, _record_where, _record_cast)

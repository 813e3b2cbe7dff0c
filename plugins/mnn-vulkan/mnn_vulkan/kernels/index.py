"""OneHot (onehot.comp), GatherND (gather_nd.comp) and ScatterElements (a copy of the data, then
scatter_elements.comp): 32-bit words moved, so float32, int32 and int64 data alike (GatherND also
1-byte data, four elements a word; the scatter's reductions float32 and int32); the index
arithmetic (slice strides, batch_dims, scatter lines) is the host's."""

from __future__ import annotations

from mnn_core.backend.kit.gather import (
    ONEHOT_KINDS,
    gather_nd_fields,
    gather_nd_supports,
    onehot_supports,
    scatter_elements_fields,
    scatter_elements_supports,
)
from mnn_core.backend.kit.layout import numel
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import copy_words, record_copy

from . import register
from .shape import BYTES, WORDS


def _record_onehot(op, rec):
    idx, values = op.inputs
    y = op.outputs[0]
    rank = len(y.info.shape)
    axis = op.node.attrs.get("axis", -1) % rank
    inner = numel(y.info.shape[axis + 1 :])
    words = copy_words(values)
    kind = ONEHOT_KINDS[idx.info.dtype]
    push = pack(y.info.size * words, inner, y.info.shape[axis], words, kind)
    rec.elementwise("onehot", [rec.tensor(idx), rec.tensor(values), rec.output(y)], push, y.info.size * words)


def _record_gather_nd(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    head, tail, invocations = gather_nd_fields(data.info, idx.info, y.info.size, op.node.attrs.get("batch_dims", 0))
    push = pack(*head, 0, *tail)
    rec.elementwise("gather_nd", [rec.tensor(data), rec.tensor(idx), rec.output(y)], push, invocations)


def _record_scatter_elements(op, rec):
    data, idx, upd = op.inputs
    y = op.outputs[0]
    words = copy_words(data)
    out = rec.output(y)
    record_copy(rec, rec.tensor(data), out, (data.info.size,), [1], [1], words=words)
    attrs = op.node.attrs
    head, tail, lines = scatter_elements_fields(
        data.info, idx.info, attrs.get("axis", 0), attrs.get("reduction", "none")
    )
    push = pack(*head, 0, 0, 0, *tail)
    rec.elementwise("scatter_elements", [rec.tensor(idx), rec.tensor(upd), out], push, lines)


register("OneHot", _record_onehot, onehot_supports, dtypes=WORDS, efficiency=0.8)
register("GatherND", _record_gather_nd, gather_nd_supports, dtypes=WORDS + BYTES, efficiency=0.8)
for _op in ("ScatterElements", "Scatter"):
    register(_op, _record_scatter_elements, scatter_elements_supports, dtypes=WORDS, efficiency=0.5)

"""Indexing by integer tensors: Gather along an axis (gather.comp), GatherElements
(gather_elements.comp), GatherND (gather_nd.comp; also 1-byte data, four elements a
word), OneHot (onehot.comp) and ScatterElements (a copy of the data, then
scatter_elements.comp). They move raw 32-bit words, so float32, int32 and int64 data go
through (the scatter's reductions: float32 and int32); the index arithmetic (slice strides,
batch_dims, scatter lines) is the host's."""

from __future__ import annotations

from mnn_core.backend.kit.gather import (
    ONEHOT_KINDS,
    gather_elements_fields,
    gather_nd_fields,
    gather_nd_supports,
    indices_supports,
    onehot_supports,
    scatter_elements_fields,
    scatter_elements_supports,
)
from mnn_core.backend.kit.layout import numel

from ..recorder import element
from . import register
from .shape import BYTES, WORDS, copy, words


def _record_gather(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    shape = data.info.shape
    axis = op.node.attrs.get("axis", 0) % len(shape)
    w = words(data)
    params = [
        y.info.size * w,
        numel(shape[axis + 1 :]) * w,
        shape[axis],
        idx.info.size,
        int(idx.info.dtype == "int64"),
        element(data),
        element(idx),
        element(y),
    ]
    rec.elementwise("gather", params, [data, idx], [y], y.info.size * w)


def _gather_elements_supports(node, ins):
    if len(ins[0].shape) > 6:
        return "rank above 6"
    return indices_supports(node, ins)


def _record_gather_elements(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    head, tail = gather_elements_fields(data.info, idx.info, y.info.size, op.node.attrs.get("axis", 0))
    params = [*head, element(data), element(idx), element(y), *tail]
    rec.elementwise("gather_elements", params, [data, idx], [y], y.info.size)


def _record_gather_nd(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    head, tail, invocations = gather_nd_fields(data.info, idx.info, y.info.size, op.node.attrs.get("batch_dims", 0))
    params = [*head, element(data), element(idx), element(y), *tail]
    rec.elementwise("gather_nd", params, [data, idx], [y], invocations)


def _record_onehot(op, rec):
    idx, values = op.inputs[0], op.inputs[-1]
    y = op.outputs[0]
    rank = len(y.info.shape)
    axis = op.node.attrs.get("axis", -1) % rank
    w = words(values)
    kind = ONEHOT_KINDS[idx.info.dtype]
    params = [
        y.info.size * w,
        numel(y.info.shape[axis + 1 :]),
        y.info.shape[axis],
        w,
        kind,
        element(idx),
        element(values),
        element(y),
    ]
    rec.elementwise("onehot", params, [idx, values], [y], y.info.size * w)


def _record_scatter_elements(op, rec):
    data, idx, upd = op.inputs
    y = op.outputs[0]
    copy(rec, data, y, (data.info.size,), [1], [1], words=words(data))
    attrs = op.node.attrs
    head, tail, lines = scatter_elements_fields(
        data.info, idx.info, attrs.get("axis", 0), attrs.get("reduction", "none")
    )
    params = [*head, element(idx), element(upd), element(y), *tail]
    rec.elementwise("scatter_elements", params, [idx, upd, y], [y], lines)


register("OneHot", _record_onehot, onehot_supports, dtypes=WORDS, efficiency=0.8)
register("GatherND", _record_gather_nd, gather_nd_supports, dtypes=WORDS + BYTES, efficiency=0.8)
register("Gather", _record_gather, indices_supports, dtypes=WORDS, efficiency=0.8)
register("GatherElements", _record_gather_elements, _gather_elements_supports, dtypes=WORDS, efficiency=0.8)
for _op in ("ScatterElements", "Scatter"):
    register(_op, _record_scatter_elements, scatter_elements_supports, dtypes=WORDS, efficiency=0.5)

"""Indexing by integer tensors: Gather along an axis (gather.comp) and GatherElements
(gather_elements.comp). Both move raw 32-bit words, so float32, int32 and int64 data
go through; the indices are int32 or int64."""

from __future__ import annotations

from mnn_core.backend.kit.layout import contiguous_strides, numel, pad_to

from ..recorder import element
from . import register
from .shape import WORDS, words


def _indices_supports(node, ins):
    if ins[1].dtype not in ("int64", "int32"):
        return f"int64/int32 indices only, got {ins[1].dtype}"
    return True


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
    return _indices_supports(node, ins)


def _record_gather_elements(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    rank = len(data.info.shape)
    axis = op.node.attrs.get("axis", 0) % rank
    params = [
        y.info.size,
        rank,
        axis,
        words(data),
        data.info.shape[axis],
        int(idx.info.dtype == "int64"),
        element(data),
        element(idx),
        element(y),
        pad_to(idx.info.shape, 6, 1),
        pad_to(contiguous_strides(data.info.shape), 6),
    ]
    rec.elementwise("gather_elements", params, [data, idx], [y], y.info.size)


register("Gather", _record_gather, _indices_supports, dtypes=WORDS, efficiency=0.8)
register("GatherElements", _record_gather_elements, _gather_elements_supports, dtypes=WORDS, efficiency=0.8)

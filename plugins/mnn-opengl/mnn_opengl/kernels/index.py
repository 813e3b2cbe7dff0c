"""Indexing by integer tensors: Gather along an axis (gather.comp), GatherElements
(gather_elements.comp), GatherND (gather_nd.comp; also 1-byte data, four elements a
word) and OneHot (onehot.comp). They move raw 32-bit words, so float32, int32 and
int64 data go through; the index arithmetic (slice strides, batch_dims) is the host's."""

from __future__ import annotations

from mnn_core.backend.kit.gather import gather_nd_plan
from mnn_core.backend.kit.layout import contiguous_strides, numel, pad_to

from ..recorder import element
from . import register
from .shape import BYTES, WORDS, words

MAX_ND = 8  # indexed dims gather_nd.comp takes


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


def _gather_nd_supports(node, ins):
    if ins[1].dtype not in ("int32", "int64"):
        return f"int32/int64 indices only, got {ins[1].dtype}"
    if ins[1].shape and ins[1].shape[-1] > MAX_ND:
        return f"indices address {ins[1].shape[-1]} dims (max {MAX_ND})"
    return True


def _record_gather_nd(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    s, m, per_batch, batch_stride, dims, strides = gather_nd_plan(
        data.info.shape, idx.info.shape, op.node.attrs.get("batch_dims", 0)
    )
    one_byte = data.info.dtype in BYTES
    w = 1 if one_byte else words(data)  # 1-byte data: sizes in elements, 4 gathered per invocation
    total = y.info.size * w
    params = [
        total,
        max(s, 1) * w,
        m,
        max(per_batch, 1),
        batch_stride * w,
        int(idx.info.dtype == "int64"),
        int(one_byte),
        element(data),
        element(idx),
        element(y),
        pad_to(dims, MAX_ND, 1),
        pad_to([st * w for st in strides], MAX_ND),
    ]
    rec.elementwise("gather_nd", params, [data, idx], [y], -(-total // 4) if one_byte else total)


def _onehot_supports(node, ins):
    if ins[0].dtype not in ("int32", "int64", "float32"):
        return f"int32/int64/float32 indices only, got {ins[0].dtype}"
    return True


def _record_onehot(op, rec):
    idx, values = op.inputs[0], op.inputs[-1]
    y = op.outputs[0]
    rank = len(y.info.shape)
    axis = op.node.attrs.get("axis", -1) % rank
    w = words(values)
    kind = {"int32": 0, "int64": 1, "float32": 2}[idx.info.dtype]
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


register("OneHot", _record_onehot, _onehot_supports, dtypes=WORDS, efficiency=0.8)
register("GatherND", _record_gather_nd, _gather_nd_supports, dtypes=WORDS + BYTES, efficiency=0.8)
register("Gather", _record_gather, _indices_supports, dtypes=WORDS, efficiency=0.8)
register("GatherElements", _record_gather_elements, _gather_elements_supports, dtypes=WORDS, efficiency=0.8)

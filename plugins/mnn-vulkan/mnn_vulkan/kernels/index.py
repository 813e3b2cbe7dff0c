"""OneHot (onehot.comp) and GatherND (gather_nd.comp): 32-bit words moved, so float32, int32 and
int64 data alike (GatherND also 1-byte data, four elements a word); the index arithmetic (slice
strides, batch_dims) is the host's."""

from __future__ import annotations

from mnn_core.backend.kit.gather import gather_nd_plan
from mnn_core.backend.kit.layout import numel, pad_to
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import copy_words

from . import register
from .shape import BYTES, WORDS

MAX_ND = 8  # indexed dims gather_nd.comp takes


def _onehot_supports(node, ins):
    if ins[0].dtype not in ("int32", "int64", "float32"):
        return f"int32/int64/float32 indices only, got {ins[0].dtype}"
    return True


def _record_onehot(op, rec):
    idx, values = op.inputs
    y = op.outputs[0]
    rank = len(y.info.shape)
    axis = op.node.attrs.get("axis", -1) % rank
    inner = numel(y.info.shape[axis + 1 :])
    words = copy_words(values)
    kind = {"int32": 0, "int64": 1, "float32": 2}[idx.info.dtype]
    push = pack(y.info.size * words, inner, y.info.shape[axis], words, kind)
    rec.elementwise("onehot", [rec.tensor(idx), rec.tensor(values), rec.output(y)], push, y.info.size * words)


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
    w = 1 if one_byte else copy_words(data)  # 1-byte data: sizes in elements, 4 gathered per invocation
    total = y.info.size * w
    push = pack(
        total,
        max(s, 1) * w,
        m,
        max(per_batch, 1),
        batch_stride * w,
        int(idx.info.dtype == "int64"),
        int(one_byte),
        0,
        pad_to(dims, MAX_ND, 1),
        pad_to([st * w for st in strides], MAX_ND),
    )
    invocations = -(-total // 4) if one_byte else total
    rec.elementwise("gather_nd", [rec.tensor(data), rec.tensor(idx), rec.output(y)], push, invocations)


register("OneHot", _record_onehot, _onehot_supports, dtypes=WORDS, efficiency=0.8)
register("GatherND", _record_gather_nd, _gather_nd_supports, dtypes=WORDS + BYTES, efficiency=0.8)

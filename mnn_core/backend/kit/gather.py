"""GatherND as the GPU kernels take it: output element (j, s) is element s of the slice at
batch(j) * batch_stride + sum_k idx[j][k] * strides[k] in the data, j / per_batch its batch entry;
and what the GPU index kernels (gather, gather_elements, gather_nd, onehot, scatter_elements
shaders) take."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .layout import contiguous_strides, numel, pad_to

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo

GATHER_ND_MAX = 8  # indexed dims the gather_nd shaders take


def indices_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    """Gather's and GatherElements' indices (input 1): int32 or int64."""
    if ins[1].dtype not in ("int64", "int32"):
        return f"int64/int32 indices only, got {ins[1].dtype}"
    return True


def gather_nd_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    if ins[1].dtype not in ("int32", "int64"):
        return f"int32/int64 indices only, got {ins[1].dtype}"
    if ins[1].shape and ins[1].shape[-1] > GATHER_ND_MAX:
        return f"indices address {ins[1].shape[-1]} dims (max {GATHER_ND_MAX})"
    return True


def onehot_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    if ins[0].dtype not in ("int32", "int64", "float32"):
        return f"int32/int64/float32 indices only, got {ins[0].dtype}"
    return True


#: 1-byte dtypes: gather_nd moves them four to a word
ONE_BYTE = ("bool", "uint8", "int8")


def _value_words(info: TensorInfo) -> int:
    return 2 if info.dtype == "int64" else 1


def gather_nd_fields(data: TensorInfo, idx: TensorInfo, out_size: int, batch_dims: int) -> tuple[list, list, int]:
    """The gather_nd shaders' parameters around the tensors' places, and their invocations:
    (total, slice size, m, per_batch, batch stride, int64 indices, one-byte data), (dims, strides)
    padded to GATHER_ND_MAX. Sizes count 32-bit words, or elements of 1-byte data (four an invocation)."""
    s, m, per_batch, batch_stride, dims, strides = gather_nd_plan(data.shape, idx.shape, batch_dims)
    one_byte = data.dtype in ONE_BYTE
    w = 1 if one_byte else _value_words(data)
    total = out_size * w
    head = [total, max(s, 1) * w, m, max(per_batch, 1), batch_stride * w, int(idx.dtype == "int64"), int(one_byte)]
    tail = [pad_to(dims, GATHER_ND_MAX, 1), pad_to([st * w for st in strides], GATHER_ND_MAX)]
    return head, tail, -(-total // 4) if one_byte else total


def gather_elements_fields(data: TensorInfo, idx: TensorInfo, out_size: int, axis: int) -> tuple[list, list]:
    """The gather_elements shaders' parameters around the tensors' places: (outputs, rank, axis,
    words a value, the axis' length, int64 indices), (index shape, data strides) padded to 6."""
    rank = len(data.shape)
    axis %= rank
    head = [out_size, rank, axis, _value_words(data), data.shape[axis], int(idx.dtype == "int64")]
    return head, [pad_to(idx.shape, 6, 1), pad_to(contiguous_strides(data.shape), 6)]


#: the scatter_elements shaders' reductions
SCATTER_REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def scatter_elements_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    """ScatterElements (and the older Scatter) on up to 6 dims; the reductions on float32 or int32
    data (a plain write moves int64's two words as well)."""
    if len(ins[0].shape) > 6:
        return f"rank {len(ins[0].shape)} above 6"
    if ins[1].dtype not in ("int64", "int32"):
        return f"int64/int32 indices only, got {ins[1].dtype}"
    reduction = node.attrs.get("reduction", "none")
    if reduction != "none" and ins[0].dtype not in ("float32", "int32"):
        return f"reduction {reduction!r} of {ins[0].dtype} data (float32/int32 only)"
    return True


def scatter_elements_fields(
    data: TensorInfo, idx: TensorInfo, axis: int, reduction: str
) -> tuple[list[int], list[int], int]:
    """The scatter_elements shaders' parameters after the output holds a copy of the data:
    (lines, rank, axis, words a value, the data's axis length, indices along the axis, int64
    indices, reduction, int data), (the index shape with the axis as 1, data strides, index
    strides) padded to 6, and the invocations. One invocation walks one line of indices along
    the axis in order: only indices of one line can name the same element, so duplicates
    reduce (or, for a plain write, the last wins) without atomics."""
    rank = len(data.shape)
    axis %= rank
    count = int(idx.shape[axis])
    lines = numel(idx.shape) // count if count else 0
    line_shape = [1 if d == axis else int(n) for d, n in enumerate(idx.shape)]
    head = [
        lines,
        rank,
        axis,
        _value_words(data),
        int(data.shape[axis]),
        count,
        int(idx.dtype == "int64"),
        SCATTER_REDUCTIONS[reduction],
        int(data.dtype == "int32"),
    ]
    tail = [
        *pad_to(line_shape, 6, 1),
        *pad_to(contiguous_strides(data.shape), 6),
        *pad_to(contiguous_strides(idx.shape), 6),
    ]
    return head, tail, lines


#: the onehot shaders' index kinds
ONEHOT_KINDS = {"int32": 0, "int64": 1, "float32": 2}


def gather_nd_plan(
    data_shape: Sequence[int], idx_shape: Sequence[int], batch_dims: int
) -> tuple[int, int, int, int, list[int], list[int]]:
    """(slice size, m indexed dims, per_batch index tuples, batch stride, the m dims, their strides),
    in elements."""
    m = idx_shape[-1]
    strides = contiguous_strides(data_shape)
    slice_size = numel(data_shape[batch_dims + m :])
    per_batch = numel(idx_shape[batch_dims:-1])
    batch_stride = strides[batch_dims - 1] if batch_dims else 0
    dims = [int(d) for d in data_shape[batch_dims : batch_dims + m]]
    return slice_size, m, per_batch, batch_stride, dims, [int(s) for s in strides[batch_dims : batch_dims + m]]

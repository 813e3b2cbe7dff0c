"""Data movement on Arm (csrc/move.c), for every dtype: elements move as bytes, so the fp16 domain's
float tensors (2 bytes an element) take the same kernels and stay in fp16 (half_native).

Slice, Transpose, Expand, Tile, DepthToSpace and SpaceToDepth are one strided copy: the dense output
read at base + sum(index * stride) of the input, with dims merged where they stay contiguous. Split is
Concat backwards; Pad maps each output index per axis to an input offset (or the constant); Gather,
GatherElements and Where are loops of their own.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.layout import collapse_walk as merge_dims
from mnn_core.backend.kit.layout import contiguous_strides as dense
from mnn_core.backend.kit.layout import slice_copy
from mnn_core.graph.ir import DTYPES
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.shape import split_sizes

from . import _arm, half
from ._common import kernel, prod, static_shape

INDEX_DTYPES = ("int32", "int64")
MAX_DIMS = 16  # ARM_MOVE_MAX_DIMS of csrc/move.h
MAX_WHERE_DIMS = 8  # MNN_MAX_DIMS


def elem_bytes(info, ctx) -> int:
    return 2 if half.half_activations(ctx) and half.stored_half(info) else np.dtype(info.dtype).itemsize


def _strided(node, outs, ctx, dims, strides, base=0):
    merged, (st,) = merge_dims(dims, strides)
    if len(merged) > MAX_DIMS:
        raise ValueError(f"arm {node.op}: {len(merged)} dims after merging (at most {MAX_DIMS})")
    return _arm.strided(f"arm.{node.op}", elem_bytes(outs[0], ctx), base, merged, st)


def _dims_ok(limit):
    def supports(node, ins):
        return True if all(len(i.shape) <= limit for i in ins if i is not None) else f"rank above {limit}"

    return supports


@kernel("Identity", half_native=True, dtypes=DTYPES, inplace=True, efficiency=0.5)
def prepare_identity(node, ins, outs, constants, ctx):
    return _arm.strided("arm.Identity", elem_bytes(outs[0], ctx), 0, [prod(static_shape(outs[0]))], [1])


@kernel("Slice", half_native=True, dtypes=DTYPES, efficiency=0.5)
def prepare_slice(node, ins, outs, constants, ctx):
    out, strides, _, offset, _ = slice_copy(static_shape(ins[0]), node.attrs)
    return _strided(node, outs, ctx, list(out), strides, offset if prod(out) else 0)


@kernel("Transpose", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_dims_ok(MAX_DIMS))
def prepare_transpose(node, ins, outs, constants, ctx):
    shape = static_shape(ins[0])
    perm = node.attrs.get("perm") or list(range(len(shape)))[::-1]
    st = dense(shape)
    return _strided(node, outs, ctx, [shape[p] for p in perm], [st[p] for p in perm])


def broadcast_strides(shape, out) -> list[int]:
    """The element strides that read `shape` broadcast (right-aligned) to `out`: 0 on its dims of 1."""
    shape = (1,) * (len(out) - len(shape)) + tuple(shape)
    return [0 if d == 1 else st for d, st in zip(shape, dense(shape))]


@kernel("Expand", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_dims_ok(MAX_DIMS))
def prepare_expand(node, ins, outs, constants, ctx):
    out = static_shape(outs[0])
    return _strided(node, outs, ctx, list(out), broadcast_strides(static_shape(ins[0]), out))


@kernel("Tile", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_dims_ok(MAX_DIMS // 2))
def prepare_tile(node, ins, outs, constants, ctx):
    """The output viewed as (r0, d0, r1, d1, ...): each copy reads the input again (stride 0 on r)."""
    shape = static_shape(ins[0])
    dims, strides = [], []
    for d, r, st in zip(shape, node.attrs["repeats"], dense(shape)):
        dims += [r, d]
        strides += [0, st]
    return _strided(node, outs, ctx, dims, strides)


def _transposed(node, outs, ctx, shape, perm):
    st = dense(shape)
    return _strided(node, outs, ctx, [shape[p] for p in perm], [st[p] for p in perm])


@kernel("DepthToSpace", half_native=True, dtypes=DTYPES, efficiency=0.3)
def prepare_depth_to_space(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    b = node.attrs["blocksize"]
    if node.attrs["mode"] == "DCR":
        return _transposed(node, outs, ctx, (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2))
    return _transposed(node, outs, ctx, (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3))


@kernel("SpaceToDepth", half_native=True, dtypes=DTYPES, efficiency=0.3)
def prepare_space_to_depth(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    b = node.attrs["blocksize"]
    return _transposed(node, outs, ctx, (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4))


@kernel("Split", half_native=True, dtypes=DTYPES, efficiency=0.5)
def prepare_split(node, ins, outs, constants, ctx):
    shape = static_shape(ins[0])
    axis, sizes = split_sizes(shape, node.attrs)
    inner = prod(shape[axis + 1 :])
    return _arm.split("arm.Split", prod(shape[:axis]), [s * inner for s in sizes], elem_bytes(ins[0], ctx))


def _index_supports(node, ins):
    return True if ins[1].dtype in INDEX_DTYPES else f"indices of {ins[1].dtype} (int32 / int64 only)"


@kernel("Gather", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_index_supports)
def prepare_gather(node, ins, outs, constants, ctx):
    shape = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(shape), "Gather")
    return _arm.gather(
        "arm.Gather",
        prod(shape[:axis]),
        shape[axis],
        prod(shape[axis + 1 :]) * elem_bytes(ins[0], ctx),
        np.dtype(ins[1].dtype).itemsize,
    )


@kernel("GatherElements", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_index_supports)
def prepare_gather_elements(node, ins, outs, constants, ctx):
    shape, idx = static_shape(ins[0]), static_shape(ins[1])
    axis = normalize_axis(node.attrs["axis"], len(shape), "GatherElements")
    if idx[:axis] != shape[:axis] or idx[axis + 1 :] != shape[axis + 1 :]:
        from mnn_core.errors import BackendError

        raise BackendError(f"arm GatherElements: indices {idx} differ from data {shape} off axis {axis}")
    return _arm.gather_elements(
        "arm.GatherElements",
        prod(shape[:axis]),
        idx[axis],
        shape[axis],
        prod(shape[axis + 1 :]),
        elem_bytes(ins[0], ctx),
        np.dtype(ins[1].dtype).itemsize,
    )


def _where_supports(node, ins):
    if ins[0].dtype != "bool":
        return "the condition must be bool"
    return _dims_ok(MAX_WHERE_DIMS)(node, ins)


@kernel("Where", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_where_supports)
def prepare_where(node, ins, outs, constants, ctx):
    out = static_shape(outs[0])
    dims, strides = merge_dims(list(out), *(broadcast_strides(static_shape(i), out) for i in ins))
    if len(dims) > MAX_WHERE_DIMS:
        raise ValueError(f"arm Where: {len(dims)} dims after merging (at most {MAX_WHERE_DIMS})")
    return _arm.where("arm.Where", elem_bytes(outs[0], ctx), dims, *strides)


def _pad_map(dim: int, begin: int, size: int, stride: int, mode: str) -> np.ndarray:
    """Input offset of each output index along one axis (-1: the constant)."""
    i = np.arange(size, dtype=np.int64) - begin
    if mode == "edge":
        i = np.clip(i, 0, dim - 1)
    elif mode == "reflect":
        period = max(2 * (dim - 1), 1)
        i = np.abs(i) % period
        i = np.where(i >= dim, period - i, i)
    elif mode == "wrap":
        i = i % max(dim, 1)
    else:
        i = np.where((i >= 0) & (i < dim), i, -1)
    return np.where(i < 0, -1, i * stride)


def _pad_supports(node, ins):
    if len(ins[0].shape) > MAX_WHERE_DIMS:
        return f"rank above {MAX_WHERE_DIMS}"
    if node.attrs["mode"] in ("edge", "reflect", "wrap") and 0 in ins[0].shape:
        return f"{node.attrs['mode']} padding of an empty tensor"
    return True


@kernel("Pad", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_pad_supports)
def prepare_pad(node, ins, outs, constants, ctx):
    shape, out = static_shape(ins[0]), static_shape(outs[0])
    if not shape:  # a scalar pads nothing
        shape, out = (1,), (1,)
    pads, mode = node.attrs["pads"] or [0] * 2 * len(shape), node.attrs["mode"]
    maps = [_pad_map(d, pads[a], o, st, mode) for a, (d, o, st) in enumerate(zip(shape, out, dense(shape)))]
    size = elem_bytes(outs[0], ctx)
    vtype = np.float16 if size == 2 and outs[0].dtype == "float32" else np.dtype(outs[0].dtype)
    value = np.array(node.attrs["value"]).astype(vtype).tobytes()
    return _arm.pad("arm.Pad", size, list(out), maps, value)


def _gather_nd_supports(node, ins):
    if ins[1].dtype != "int64":
        return "int64 indices only"
    if not ins[1].shape or ins[1].shape[-1] == 0:
        return "index tuples of no axes (the whole data per index)"
    return True


@kernel("GatherND", half_native=True, dtypes=DTYPES, efficiency=0.5, supports=_gather_nd_supports)
def prepare_gather_nd(node, ins, outs, constants, ctx):
    shape, idx = static_shape(ins[0]), static_shape(ins[1])
    b, k = node.attrs["batch_dims"], idx[-1]
    inner = prod(shape[b + k :])
    blocks = dense(shape[b : b + k])
    return _arm.gather_nd(
        "arm.GatherND",
        prod(shape[:b]),
        prod(idx[b:-1]),
        inner * elem_bytes(ins[0], ctx),
        prod(shape[b : b + k]),
        list(shape[b : b + k]) or [1],
        blocks or [0],
    )

"""Data movement on x86 (_movement.pyx, csrc/movement/): copies, selections and conversions of
elements of any dtype.

Slice, Split, Expand, Tile, DepthToSpace and SpaceToDepth are one strided copy: the dense output read at
base + sum(index * stride) of the input, planned here with the dims merged where they stay contiguous.
Pad maps each output index per axis to an input offset (or the constant). The index ops (Gather and its
kin, the scatters, OneHot, ReverseSequence, Trilu, EyeLike) are loops of their own in index.c.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.layout import collapse_walk as merge_dims
from mnn_core.backend.kit.layout import contiguous_strides as _dense
from mnn_core.backend.kit.layout import slice_copy
from mnn_core.graph.ir import DTYPES, NUMPY_DTYPES
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.shape import split_sizes

from . import _movement
from ._common import kernel, static_shape

INDEX_DTYPES = ("int32", "int64")
REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _size(dtype: str) -> int:
    return np.dtype(dtype).itemsize


def _plan(dims, strides, base: int = 0) -> tuple:
    merged, (st,) = merge_dims(dims, strides)
    return merged, st, base


def _strided(node, outs, ctx, isa, plans):
    return _movement.strided(isa, ctx.threads, f"x86.{node.op}", _size(outs[0].dtype), plans)


@kernel("Identity", dtypes=DTYPES, inplace=True, efficiency=0.5)
def prepare_identity(node, ins, outs, constants, ctx, isa):
    return _movement.copy(isa, ctx.threads, "x86.Identity")


# -- strided copies --------------------------------------------------------------------------------


@kernel("Slice", dtypes=DTYPES, efficiency=0.5)
def prepare_slice(node, ins, outs, constants, ctx, isa):
    out, strides, _, offset, _ = slice_copy(static_shape(ins[0]), node.attrs)
    return _strided(node, outs, ctx, isa, [_plan(out, strides, offset if _prod(out) else 0)])


@kernel("Split", dtypes=DTYPES, efficiency=0.5)
def prepare_split(node, ins, outs, constants, ctx, isa):
    shape = static_shape(ins[0])
    axis, sizes = split_sizes(shape, node.attrs)
    dense = _dense(shape)
    plans, at = [], 0
    for size in sizes:
        dims = list(shape)
        dims[axis] = size
        plans.append(_plan(dims, dense, at * dense[axis]))
        at += size
    return _strided(node, outs, ctx, isa, plans)


def _broadcast_strides(shape, out) -> list[int]:
    """The element strides that read `shape` broadcast (right-aligned) to `out`: 0 on its dims of 1."""
    shape = (1,) * (len(out) - len(shape)) + tuple(shape)
    return [0 if d == 1 else st for d, st in zip(shape, _dense(shape))]


@kernel("Expand", dtypes=DTYPES, efficiency=0.5)
def prepare_expand(node, ins, outs, constants, ctx, isa):
    out = static_shape(outs[0])
    return _strided(node, outs, ctx, isa, [_plan(out, _broadcast_strides(static_shape(ins[0]), out))])


@kernel("Tile", dtypes=DTYPES, efficiency=0.5)
def prepare_tile(node, ins, outs, constants, ctx, isa):
    """The output viewed as (r0, d0, r1, d1, ...): each copy reads the input again (stride 0 on r)."""
    shape = static_shape(ins[0])
    dims, strides = [], []
    for d, r, st in zip(shape, node.attrs["repeats"], _dense(shape)):
        dims += [r, d]
        strides += [0, st]
    return _strided(node, outs, ctx, isa, [_plan(dims, strides)])


def _transposed(shape, perm) -> tuple:
    """The strided plan of a reshape to `shape` followed by a transpose by `perm`."""
    dense = _dense(shape)
    return _plan([shape[p] for p in perm], [dense[p] for p in perm])


@kernel("DepthToSpace", dtypes=DTYPES, efficiency=0.3)
def prepare_depth_to_space(node, ins, outs, constants, ctx, isa):
    n, c, h, w = static_shape(ins[0])
    b = node.attrs["blocksize"]
    if node.attrs["mode"] == "DCR":
        plan = _transposed((n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2))
    else:
        plan = _transposed((n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3))
    return _strided(node, outs, ctx, isa, [plan])


@kernel("SpaceToDepth", dtypes=DTYPES, efficiency=0.3)
def prepare_space_to_depth(node, ins, outs, constants, ctx, isa):
    n, c, h, w = static_shape(ins[0])
    b = node.attrs["blocksize"]
    plan = _transposed((n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4))
    return _strided(node, outs, ctx, isa, [plan])


# -- Where, Pad, Cast ---------------------------------------------------------------------------------


@kernel(
    "Where",
    dtypes=DTYPES,
    efficiency=0.5,
    supports=lambda node, ins: True if ins[0].dtype == "bool" else "the condition must be bool",
)
def prepare_where(node, ins, outs, constants, ctx, isa):
    out = static_shape(outs[0])
    dims, strides = merge_dims(out, *(_broadcast_strides(static_shape(i), out) for i in ins))
    return _movement.where(isa, ctx.threads, "x86.Where", _size(outs[0].dtype), dims, strides)


def _pad_map(dim: int, begin: int, size: int, stride: int, mode: str) -> np.ndarray:
    """Input offset of each output index along one axis (-1: the constant)."""
    i = np.arange(size, dtype=np.int64) + max(-begin, 0) - max(begin, 0)
    inside = (i >= 0) & (i < dim)
    if mode == "edge":
        i = np.clip(i, 0, dim - 1)
    elif mode == "reflect":
        i = np.where(i < 0, -i, np.where(i >= dim, 2 * (dim - 1) - i, i))
    elif mode == "wrap":
        i = i % max(dim, 1)
    else:
        i = np.where(inside, i, -1)
    return np.where(i < 0, -1, i * stride)


@kernel("Pad", dtypes=DTYPES, efficiency=0.5)
def prepare_pad(node, ins, outs, constants, ctx, isa):
    shape, out = static_shape(ins[0]), static_shape(outs[0])
    if not shape:  # a scalar pads nothing
        shape, out = (1,), (1,)
    rank, pads, mode = len(shape), node.attrs["pads"] or [0] * 2 * len(shape), node.attrs["mode"]
    dense = _dense(shape)
    maps = [_pad_map(d, pads[a], o, st, mode) for a, (d, o, st) in enumerate(zip(shape, out, dense))]
    raw = np.arange(out[-1]) + max(-pads[rank - 1], 0) - max(pads[rank - 1], 0)
    interior = np.flatnonzero((raw >= 0) & (raw < shape[-1]))  # one contiguous run of the last axis
    lo, hi = (int(interior[0]), int(interior[-1]) + 1) if interior.size else (0, 0)
    value = np.array(node.attrs["value"]).astype(outs[0].dtype).tobytes()
    return _movement.pad(isa, ctx.threads, "x86.Pad", _size(outs[0].dtype), list(out), maps, lo, hi, value)


#: besides the numeric dtypes among themselves: bfloat16 to and from float32 (cast.c)
BF16_CASTS = {("bfloat16", "float32"), ("float32", "bfloat16")}


def _cast_supported(node, ins) -> bool | str:
    pair = ins[0].dtype, node.attrs["to"]
    if set(pair) <= set(NUMPY_DTYPES) or pair in BF16_CASTS:
        return True
    return f"x86 casts between {'/'.join(NUMPY_DTYPES)} and bfloat16 <-> float32 only"


@kernel("Cast", dtypes=NUMPY_DTYPES + ("bfloat16",), supports=_cast_supported, efficiency=0.5)
def prepare_cast(node, ins, outs, constants, ctx, isa):
    src, to = DTYPES.index(ins[0].dtype), DTYPES.index(node.attrs["to"])
    return _movement.cast(isa, ctx.threads, "x86.Cast", src, to)


# -- index ops (csrc/movement/index.c) -----------------------------------------------------------------


def _index(kind, node, outs, ctx, isa, **fields):
    return _movement.index(kind, isa, ctx.threads, f"x86.{node.op}", _size(outs[0].dtype), fields)


def _int_indices(position: int):
    def supports(node, ins) -> bool | str:
        return True if ins[position].dtype in INDEX_DTYPES else "indices must be int32 or int64"

    return supports


@kernel("Gather", dtypes=DTYPES, supports=_int_indices(1), efficiency=0.5)
def prepare_gather(node, ins, outs, constants, ctx, isa):
    shape = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(shape), "Gather")
    return _index(
        "gather", node, outs, ctx, isa, outer=_prod(shape[:axis]), dim=shape[axis], inner=_prod(shape[axis + 1 :])
    )


def _elements_supported(node, ins) -> bool | str:
    """Off the axis, GatherElements' indices match the data (numpy's take_along_axis would broadcast
    them); the scatters' indices may be smaller there (they address the data's first entries)."""
    if ins[1].dtype not in INDEX_DTYPES:
        return "indices must be int32 or int64"
    data, idx = ins[0].shape, ins[1].shape
    axis = node.attrs["axis"] % max(len(data), 1)
    fits = (lambda i, d: i == d) if node.op == "GatherElements" else (lambda i, d: i <= d)
    if len(data) != len(idx) or not all(fits(i, d) for a, (i, d) in enumerate(zip(idx, data)) if a != axis):
        return f"indices {idx} do not fit the data {data} off the axis"
    return True


def _elements_fields(node, ins) -> dict:
    data, idx = static_shape(ins[0]), static_shape(ins[1])
    return dict(
        ndim=len(idx),
        axis=normalize_axis(node.attrs["axis"], len(data), node.op),
        dims=idx,
        ddims=data,
        dstride=_dense(data),
    )


@kernel("GatherElements", dtypes=DTYPES, supports=_elements_supported, efficiency=0.3)
def prepare_gather_elements(node, ins, outs, constants, ctx, isa):
    return _index("gather_elements", node, outs, ctx, isa, **_elements_fields(node, ins))


def _prepare_scatter_elements(node, ins, outs, constants, ctx, isa):
    red = REDUCTIONS[node.attrs.get("reduction", "none")]
    return _index("scatter_elements", node, outs, ctx, isa, reduction=red, **_elements_fields(node, ins))


for _op in ("ScatterElements", "Scatter"):
    kernel(_op, dtypes=DTYPES, supports=_elements_supported, efficiency=0.3)(_prepare_scatter_elements)


@kernel("GatherND", dtypes=DTYPES, supports=_int_indices(1), efficiency=0.3)
def prepare_gather_nd(node, ins, outs, constants, ctx, isa):
    data, idx = static_shape(ins[0]), static_shape(ins[1])
    b, k = node.attrs["batch_dims"], idx[-1]
    return _index(
        "gather_nd",
        node,
        outs,
        ctx,
        isa,
        axis=b,
        k=k,
        batch=_prod(data[:b]),
        per_batch=_prod(idx[b:-1]),
        inner=_prod(data[b + k :]),
        batch_stride=_prod(data[b:]),
        ddims=data,
        dstride=_dense(data),
    )


@kernel("ScatterND", dtypes=DTYPES, supports=_int_indices(1), efficiency=0.3)
def prepare_scatter_nd(node, ins, outs, constants, ctx, isa):
    data, idx = static_shape(ins[0]), static_shape(ins[1])
    k = idx[-1]
    return _index(
        "scatter_nd",
        node,
        outs,
        ctx,
        isa,
        reduction=REDUCTIONS[node.attrs["reduction"]],
        k=k,
        per_batch=_prod(idx[:-1]),
        inner=_prod(data[k:]),
        ddims=data,
        dstride=_dense(data),
    )


def _onehot_supported(node, ins) -> bool | str:
    ok = ("float32", "float64") + tuple(d for d in NUMPY_DTYPES if d.startswith(("int", "uint")))
    return True if ins[0].dtype in ok else f"indices of {ins[0].dtype}"


@kernel("OneHot", dtypes=DTYPES, supports=_onehot_supported, efficiency=0.3)
def prepare_onehot(node, ins, outs, constants, ctx, isa):
    idx = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(idx) + 1, "OneHot")
    return _index(
        "onehot", node, outs, ctx, isa, outer=_prod(idx[:axis]), dim=node.attrs["depth"], inner=_prod(idx[axis:])
    )


@kernel("ReverseSequence", dtypes=DTYPES, supports=_int_indices(1), efficiency=0.3)
def prepare_reverse_sequence(node, ins, outs, constants, ctx, isa):
    shape = static_shape(ins[0])
    t, b = node.attrs["time_axis"], node.attrs["batch_axis"]
    return _index(
        "reverse_sequence",
        node,
        outs,
        ctx,
        isa,
        time_major=int(t == 0),
        outer=shape[b],
        dim=shape[t],
        inner=_prod(shape[2:]),
    )


@kernel("Trilu", dtypes=DTYPES, efficiency=0.5)
def prepare_trilu(node, ins, outs, constants, ctx, isa):
    shape = static_shape(ins[0])
    return _index(
        "trilu",
        node,
        outs,
        ctx,
        isa,
        outer=_prod(shape[:-2]),
        dim=shape[-2],
        inner=shape[-1],
        diag=node.attrs["k"],
        upper=node.attrs["upper"],
    )


@kernel("EyeLike", dtypes=DTYPES, efficiency=0.5)
def prepare_eyelike(node, ins, outs, constants, ctx, isa):
    m, n = static_shape(outs[0])
    return _index(
        "eyelike", node, outs, ctx, isa, dim=m, inner=n, diag=node.attrs["k"], value=np.ones(1, outs[0].dtype).tobytes()
    )

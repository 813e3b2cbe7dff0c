"""Strides and shapes: what a strided kernel needs to walk its tensors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...graph.ir import TensorInfo


def cdiv(a: int, b: int) -> int:
    """a / b rounded up."""
    return -(-a // b)


def numel(dims: Iterable[int]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def pad_to(values: Sequence[int], n: int, fill: int = 0) -> list[int]:
    """`values` followed by `fill` up to n entries (a fixed-size parameter array)."""
    return list(values) + [fill] * (n - len(values))


def pad6(values: Sequence[int], fill: int = 0) -> list[int]:
    return pad_to(values, 6, fill)


def contiguous_strides(dims: Sequence[int]) -> list[int]:
    """Element strides of a C-contiguous tensor of shape `dims`."""
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= int(d)
    return strides[::-1]


def broadcast_strides(shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """Strides of `shape` (contiguous) over `out_shape` under numpy broadcasting: 0 where broadcast."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    own = contiguous_strides(padded)
    return [0 if d == 1 and o != 1 else s for d, o, s in zip(padded, out_shape, own)]


def collapse(dims: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge neighbours that are contiguous in every stride list.
    All dims of size 1 collapse to none: ([], [[], ...])."""
    out: list = []
    for i, d in enumerate(dims):
        if d == 1:
            continue
        st = [s[i] for s in strides]
        if out and all(prev == cur * d for prev, cur in zip(out[-1][1], st)):
            out[-1] = (out[-1][0] * d, st)
        else:
            out.append((d, st))
    return [d for d, _ in out], [[st[k] for _, st in out] for k in range(len(strides))]


def collapse_walk(dims: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """collapse() for a kernel that walks at least one dim: a single dim of 1 (stride 0) where every
    dim is 1."""
    out, st = collapse(dims, *strides)
    return (out, st) if out else ([1], [[0] for _ in strides])


def broadcast_plan(out_shape: Sequence[int], *in_shapes: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Collapsed output dims and each input's element strides (0 where it broadcasts)."""
    return collapse(out_shape, *(broadcast_strides(shape, out_shape) for shape in in_shapes))


def collapse_broadcast(
    out_shape: Sequence[int], a_shape: Sequence[int], b_shape: Sequence[int], max_dims: int = 8
) -> tuple[list[int], list[int], list[int]] | None:
    """(dims, a strides, b strides) of a broadcasting binary op for a kernel that walks at least one
    dim: broadcast_plan's, with a single dim of 1 where every dim is 1, and None where more than
    `max_dims` dims remain (MNN_MAX_DIMS of the C ABI by default)."""
    dims, (sa, sb) = broadcast_plan(out_shape, a_shape, b_shape)
    if len(dims) > max_dims:
        return None
    return (dims, sa, sb) if dims else ([1], [0], [0])


def static_shape(info: TensorInfo) -> tuple[int, ...]:
    """A TensorInfo's shape as ints (every dim is concrete by the time a backend prepares an op)."""
    return tuple(int(d) for d in info.shape)


def reduce_axes(op: str, shape: Sequence[int], attrs: dict) -> tuple[int, ...]:
    """The axes a Reduce* op (or a global pool, over the spatial dims) reduces."""
    if op.startswith("Global"):
        return tuple(range(2, len(shape)))
    if not attrs["axes"]:
        return () if attrs["noop_with_empty_axes"] else tuple(range(len(shape)))
    return tuple(sorted(a % len(shape) for a in attrs["axes"]))


def reduce_plan(
    op: str, shape: Sequence[int], attrs: dict
) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """(kept dims, kept strides), (reduced dims, reduced strides), each collapsed."""
    axes = reduce_axes(op, shape, attrs)
    strides = contiguous_strides(shape)
    kept = collapse(
        [d for i, d in enumerate(shape) if i not in axes], [s for i, s in enumerate(strides) if i not in axes]
    )
    red = collapse([d for i, d in enumerate(shape) if i in axes], [s for i, s in enumerate(strides) if i in axes])
    return (kept[0], kept[1][0]), (red[0], red[1][0])


# -- data movement as strided copies: (shape, src strides, dst strides, src offset, dst offset) ----


def transpose_copy(shape: Sequence[int], perm: Sequence[int]) -> tuple:
    """Transpose as one copy over the output's shape."""
    st = contiguous_strides(shape)
    out = [shape[p] for p in perm]
    return out, [st[p] for p in perm], contiguous_strides(out), 0, 0


def concat_copies(out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]], axis: int) -> list[tuple]:
    """Concat as one copy per input, each into its place along `axis` of the output."""
    ost = contiguous_strides(out_shape)
    copies, start = [], 0
    for shape in in_shapes:
        copies.append((shape, contiguous_strides(shape), ost, 0, start * ost[axis]))
        start += shape[axis]
    return copies


def split_copies(in_shape: Sequence[int], out_shapes: Sequence[Sequence[int]], axis: int) -> list[tuple]:
    """Split as one copy per output, each from its place along `axis` of the input."""
    ist = contiguous_strides(in_shape)
    copies, start = [], 0
    for shape in out_shapes:
        copies.append((shape, ist, contiguous_strides(shape), start * ist[axis], 0))
        start += shape[axis]
    return copies


def tile_plan(shape: Sequence[int], reps: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """Tile as a copy (view, source strides, destination strides): the output viewed as
    (r0, d0, r1, d1, ...), the input repeated along each r."""
    view, src = [], []
    for d, r, s in zip(shape, reps, contiguous_strides(shape)):
        view += [r, d]
        src += [0, s]
    return view, src, contiguous_strides(view)


def slice_copy(in_shape: Sequence[int], attrs: dict) -> tuple:
    """Slice (steps, negative ones included) as one copy over the output's shape."""
    from mnn_core.ops.shape import slice_plan

    slices, out_shape = slice_plan(in_shape, attrs)
    offset, strides = 0, []
    for sl, dim, st in zip(slices, in_shape, contiguous_strides(in_shape)):
        begin, _, step = sl.indices(dim)
        offset += begin * st if dim else 0
        strides.append(st * step)
    return out_shape, strides, contiguous_strides(out_shape), offset, 0

"""Data movement: one strided copy shader (copy.comp) for reshapes that the core
did not alias, Identity, Transpose, Concat, Split, Slice, Expand and Tile;
Pad (pad.comp), Gather (gather.comp) and GatherElements have their own. The copies move
32-bit words, so they take int32 and int64 (two words) tensors as well."""

from __future__ import annotations

from mnn_core.backend.kit.gather import gather_elements_fields, indices_supports
from mnn_core.backend.kit.layout import (
    broadcast_strides,
    collapse,
    contiguous_strides,
    numel,
    slice_copy,
    split_copies,
    tile_plan,
    transpose_copy,
)
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import copy_words, record_copy
from mnn_core.backend.kit.shader_ops import BYTES, WORDS, rank6, record_concat, record_pad, record_view

from ..recorder import HALF_OPS
from . import KERNELS, register


def _dims_fit(shape_pairs) -> bool | str:
    for shape, strides in shape_pairs:
        dims, _ = collapse(shape, *strides)
        if len(dims) > 6:
            return f"needs a copy of {len(dims)} dims after collapsing (max 6)"
    return True


# -- views the core could not alias, and Transpose ----------------------------------------


def _perm(node, rank):
    return node.attrs.get("perm") or list(range(rank))[::-1]


def _transpose_supports(node, ins):
    out, src, dst, _, _ = transpose_copy(ins[0].shape, _perm(node, len(ins[0].shape)))
    return _dims_fit([(out, (src, dst))])


def _record_transpose(op, rec):
    from . import copy_tile

    x, y = op.inputs[0], op.outputs[0]
    shape, src, dst, _, _ = transpose_copy(x.info.shape, _perm(op.node, len(x.info.shape)))
    words = copy_words(x, rec)
    tiled = copy_tile.plan(shape, src, dst) if copy_tile.takes(rec, words) else None
    if tiled is not None:  # both sides contiguous through shared memory
        copy_tile.record(rec, rec.tensor(x), rec.output(y), tiled)
        return
    record_copy(rec, rec.tensor(x), rec.output(y), shape, src, dst, words=words)


# -- Concat / Split / Slice -------------------------------------------------------------------


def _record_split(op, rec):
    x = op.inputs[0]
    axis = op.node.attrs["axis"] % len(x.info.shape)
    src = rec.tensor(x)
    for y, plan in zip(op.outputs, split_copies(x.info.shape, [y.info.shape for y in op.outputs], axis)):
        record_copy(rec, src, rec.output(y), *plan, words=copy_words(x, rec))


def _record_slice(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    record_copy(rec, rec.tensor(x), rec.output(y), *slice_copy(x.info.shape, op.node.attrs), words=copy_words(x, rec))


# -- Expand / Tile ------------------------------------------------------------------------------


def _expand_out(node, ins):
    import numpy as np

    return tuple(np.broadcast_shapes(tuple(ins[0].shape), tuple(node.attrs["shape"])))


def _record_expand(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    record_copy(
        rec,
        rec.tensor(x),
        rec.output(y),
        y.info.shape,
        broadcast_strides(x.info.shape, y.info.shape),
        contiguous_strides(y.info.shape),
        words=copy_words(x, rec),
    )


def _record_tile(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    view, src, dst = tile_plan(x.info.shape, op.node.attrs["repeats"])
    record_copy(rec, rec.tensor(x), rec.output(y), view, src, dst, words=copy_words(x, rec))


# -- Pad / Gather ----------------------------------------------------------------------------------


def _record_gather(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    shape = data.info.shape
    axis = op.node.attrs["axis"] % len(shape)
    inner = numel(shape[axis + 1 :])
    inner *= copy_words(data)  # gather.comp moves 32-bit words
    total = y.info.size * copy_words(data)
    push = pack(total, inner, shape[axis], idx.info.size, int(idx.info.dtype == "int64"))
    rec.elementwise("gather", [rec.tensor(data), rec.tensor(idx), rec.output(y)], push, total)


def _record_gather_elements(op, rec):
    data, idx = op.inputs
    y = op.outputs[0]
    head, tail = gather_elements_fields(data.info, idx.info, y.info.size, op.node.attrs["axis"])
    push = pack(*head, 0, 0, *tail)
    rec.elementwise("gather_elements", [rec.tensor(data), rec.tensor(idx), rec.output(y)], push, y.info.size)


def _gather_elements_supports(node, ins):
    fits = rank6(node, ins)
    return indices_supports(node, ins) if fits is True else fits


def _expand_supports(node, ins):
    out = _expand_out(node, ins)
    return _dims_fit([(out, (broadcast_strides(ins[0].shape, out), contiguous_strides(out)))])


def _tile_supports(node, ins):
    view, src, dst = tile_plan(ins[0].shape, node.attrs["repeats"])
    return _dims_fit([(view, (src, dst))])


KERNELS.register_views(record_view, BYTES)
register("Transpose", _record_transpose, _transpose_supports, dtypes=WORDS, efficiency=0.5)
register("Concat", record_concat, rank6, dtypes=WORDS, efficiency=0.8)
register("Split", _record_split, rank6, dtypes=WORDS, efficiency=0.8)
register("Slice", _record_slice, rank6, dtypes=WORDS, efficiency=0.8)
register("Expand", _record_expand, _expand_supports, dtypes=WORDS, efficiency=0.8)
register("Tile", _record_tile, _tile_supports, dtypes=WORDS, efficiency=0.8)
register("Pad", record_pad, rank6, efficiency=0.8)
register("Gather", _record_gather, indices_supports, dtypes=WORDS, efficiency=0.8)
register("GatherElements", _record_gather_elements, _gather_elements_supports, dtypes=WORDS, efficiency=0.8)
# these move float16 tensors as 16-bit elements (copy_h.comp) instead of widening them
HALF_OPS.update(
    [
        "Reshape",
        "Flatten",
        "Squeeze",
        "Unsqueeze",
        "Identity",
        "Transpose",
        "Concat",
        "Split",
        "Slice",
        "Expand",
        "Tile",
    ]
)

"""Data movement: one strided copy shader (copy.comp, raw 32-bit words) for
reshapes the core did not alias, Identity, Transpose, Concat, Split, Slice,
Expand and Tile; Pad has its own (pad.comp). Copies move words, so int32 and
int64 (two words) tensors move too."""

from __future__ import annotations

from mnn_core.backend.kit.layout import (
    broadcast_strides,
    collapse,
    concat_copies,
    contiguous_strides,
    numel,
    pad_to,
    slice_copy,
    split_copies,
    tile_plan,
    transpose_copy,
)
from mnn_core.backend.kit.shader_ops import BYTES, WORDS  # BYTES: four to a word, every tensor in whole words

from ..recorder import element
from . import KERNELS, register


def copy(rec, src, dst, shape, src_strides, dst_strides, src_off: int = 0, dst_off: int = 0, words: int = 1):
    """dst[dst_off + idx . dst_strides] = src[src_off + idx . src_strides] for every idx of
    shape, in elements of `words` 32-bit words (2 for int64)."""
    if words > 1:  # one more, innermost dim: the words of an element
        shape, src_strides, dst_strides = (
            list(shape) + [words],
            [s * words for s in src_strides] + [1],
            [s * words for s in dst_strides] + [1],
        )
        src_off, dst_off = src_off * words, dst_off * words
    total = numel(shape)
    dims, (ss, ds) = collapse(shape, src_strides, dst_strides)
    if len(dims) > 6:
        raise ValueError(f"a copy of {len(dims)} dims after collapsing (max 6)")
    params = [
        total,
        len(dims),
        element(src) + src_off,
        element(dst) + dst_off,
        pad_to(dims, 6, 1),
        pad_to(ss, 6),
        pad_to(ds, 6),
    ]
    rec.elementwise("copy", params, [src], [dst], total)


def words(ref) -> int:
    return 2 if ref.info.dtype == "int64" else 1


def _fits(shape, *strides) -> bool | str:
    dims, _ = collapse(shape, *strides)
    return True if len(dims) + 1 <= 6 else f"needs a copy of {len(dims)} dims after collapsing (max 5)"


def _record_view(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if x.offset == y.offset:  # aliased by the core: nothing to move
        return
    if x.info.dtype in BYTES:  # whole words: the padding bytes of the last one go along
        copy(rec, x, y, (-(-y.info.size // 4),), [1], [1])
        return
    copy(rec, x, y, (y.info.size,), [1], [1], words=words(x))


def _perm(node, rank):
    return node.attrs.get("perm") or list(range(rank))[::-1]


def _transpose_supports(node, ins):
    out, src, dst, _, _ = transpose_copy(ins[0].shape, _perm(node, len(ins[0].shape)))
    return _fits(out, src, dst)


def _record_transpose(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape, src, dst, _, _ = transpose_copy(x.info.shape, _perm(op.node, len(x.info.shape)))
    copy(rec, x, y, shape, src, dst, words=words(x))


def _rank5(node, ins):
    return True if all(len(i.shape) <= 5 for i in ins if i is not None) else "rank above 5"


def _record_concat(op, rec):
    y = op.outputs[0]
    axis = op.node.attrs["axis"] % len(y.info.shape)
    for x, plan in zip(op.inputs, concat_copies(y.info.shape, [x.info.shape for x in op.inputs], axis)):
        copy(rec, x, y, *plan, words(x))


def _record_split(op, rec):
    x = op.inputs[0]
    axis = op.node.attrs["axis"] % len(x.info.shape)
    for y, plan in zip(op.outputs, split_copies(x.info.shape, [y.info.shape for y in op.outputs], axis)):
        copy(rec, x, y, *plan, words=words(x))


def _record_slice(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    copy(rec, x, y, *slice_copy(x.info.shape, op.node.attrs), words=words(x))


def _expand_out(node, ins):
    import numpy as np

    return tuple(np.broadcast_shapes(tuple(ins[0].shape), tuple(node.attrs["shape"])))


def _expand_supports(node, ins):
    out = _expand_out(node, ins)
    return _fits(out, broadcast_strides(ins[0].shape, out), contiguous_strides(out))


def _record_expand(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    shape = y.info.shape
    copy(rec, x, y, shape, broadcast_strides(x.info.shape, shape), contiguous_strides(shape), words=words(x))


def _tile_supports(node, ins):
    return _fits(*tile_plan(ins[0].shape, node.attrs["repeats"]))


def _record_tile(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    copy(rec, x, y, *tile_plan(x.info.shape, op.node.attrs["repeats"]), words=words(x))


PAD_MODES = {"constant": 0, "edge": 1, "reflect": 2}


def _pad_supports(node, ins):
    if node.attrs.get("mode", "constant") not in PAD_MODES:
        return f"Pad mode {node.attrs.get('mode')!r} is not implemented (constant, edge, reflect)"
    return True if len(ins[0].shape) <= 6 else "rank above 6"


def _record_pad(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    rank = len(x.info.shape)
    begin = list(op.node.attrs["pads"][:rank])
    params = [
        y.info.size,
        rank,
        PAD_MODES[op.node.attrs.get("mode", "constant")],
        float(op.node.attrs["value"]),
        element(x),
        element(y),
        pad_to(y.info.shape, 6, 1),
        pad_to(x.info.shape, 6, 1),
        pad_to(begin, 6),
    ]
    rec.elementwise("pad", params, [x], [y], y.info.size)


KERNELS.register_views(_record_view, BYTES)
register("Transpose", _record_transpose, _transpose_supports, dtypes=WORDS, efficiency=0.5)
register("Concat", _record_concat, _rank5, dtypes=WORDS, efficiency=0.8)
register("Split", _record_split, _rank5, dtypes=WORDS, efficiency=0.8)
register("Slice", _record_slice, _rank5, dtypes=WORDS, efficiency=0.8)
register("Expand", _record_expand, _expand_supports, dtypes=WORDS, efficiency=0.8)
register("Tile", _record_tile, _tile_supports, dtypes=WORDS, efficiency=0.8)
register("Pad", _record_pad, _pad_supports, efficiency=0.8)

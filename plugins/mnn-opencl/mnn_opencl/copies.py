"""Which kernel runs a float32 strided copy (kernels/layout.cl).

copy_strided works out both offsets digit by digit for every element, and a transpose of the two innermost
axes (ConvNeXt's NCHW <-> NHWC) writes or reads with a stride. Two shapes get their own kernels:

- copy_tile_t: the dst-contiguous dim is strided in src, and another dim is src-contiguous: 32x32 tiles
  through local memory, both sides coalesced;
- copy_rows4: the innermost dim is contiguous on both sides and a multiple of 4 (ViT's head split, and the
  contiguous q, k and v slabs split from it): 4 floats a work-item, the offsets once per row.

Setting opencl.copy_tiles=off (or MNN_OPENCL_COPY_TILES=off) keeps copy_strided for all of them.

opencl.TransposeAdd (fuse.py) is a Transpose and the Add of a residual to its result: the tile adds as it
stores; where no tile fits, binary_bcast reads the transpose's input through permuted strides.
"""

from __future__ import annotations

import os

from mnn_core.backend.kit.codes import BINARY as BINARY_CODES

from ._common import collapse, contiguous_strides, int8, kernel, numel

OPTION = "opencl.copy_tiles"
ENV = "MNN_OPENCL_COPY_TILES"
TILE = 32
MIN_SIDE = 8  # a thinner tile wastes most of its work-group


def _enabled(b) -> bool:
    value = str(b.options.get(OPTION, os.environ.get(ENV, "on")) or "on").strip().lower()
    if value not in ("on", "off"):
        raise ValueError(f"{OPTION} must be on or off, got {value!r}")
    return value == "on"


def _rest(shape, ss, ds, drop):
    """The dims other than `drop`, as kernel arguments: count, int8 shape, src and dst strides."""
    keep = [d for d in range(len(shape)) if d not in drop]
    return len(keep), [shape[d] for d in keep], [ss[d] for d in keep], [ds[d] for d in keep]


def _tiled(shape: list, ss: list, ds: list) -> int | None:
    """The src-contiguous dim copy_tile_t pairs with the innermost (dst-contiguous) one, or None."""
    last = len(shape) - 1
    if ds[last] != 1 or ss[last] == 1 or shape[last] < MIN_SIDE:
        return None
    return next((d for d in range(last) if ss[d] == 1 and shape[d] >= MIN_SIDE), None)


def launch_float_copy(b, src, dst, shape: list, ss: list, ds: list, residual=None) -> None:
    """Copy src[sum c_d*ss_d] to dst[sum c_d*ds_d] over `shape` (already collapsed); with `residual` (laid out
    as dst, which must then be contiguous) add it as the copy stores."""
    last = len(shape) - 1
    if residual is not None and not (_enabled(b) and _tiled(shape, ss, ds)):
        n = numel(shape)
        args = [src, residual, dst, n, BINARY_CODES["Add"], len(shape), int8(shape), int8(ss), int8(ds)]
        b.launch("binary_bcast", args, (n,))
        return
    if _enabled(b):
        p = _tiled(shape, ss, ds)
        if p is not None:
            nd, rs, rss, rds = _rest(shape, ss, ds, (p, last))
            P, Q = shape[p], shape[last]
            gws = (-(-P // TILE) * -(-Q // TILE) * numel(rs) * TILE * 8,)
            res = [residual, 1] if residual is not None else [dst, 0]
            args = [src, dst, *res, P, Q, ss[last], ds[p], nd, int8(rs), int8(rss), int8(rds)]
            b.launch("copy_tile_t", args, gws, lws=(TILE * 8,), tunable=False)
            return
        if ss[last] == 1 and ds[last] == 1 and shape[last] % 4 == 0:
            nd, rs, rss, rds = _rest(shape, ss, ds, (last,))
            w4, rows = shape[last] // 4, numel(rs)
            b.launch("copy_rows4", [src, dst, w4, w4 * rows, nd, int8(rs), int8(rss), int8(rds)], (w4 * rows,))
            return
    n = numel(shape)
    b.launch("copy_strided", [src, dst, n, len(shape), int8(shape), int8(ss), int8(ds)], (n,))


#: a Transpose and the Add of a same-shape tensor to its result (ConvNeXt's residual): one op (fuse.py)
TRANSPOSE_ADD = "opencl.TransposeAdd"


@kernel(TRANSPOSE_ADD)
def _build_transpose_add(op, b):
    """opencl.TransposeAdd: inputs x (before the Transpose, attrs["perm"]) and r, the output's shape."""
    x, r = op.inputs
    y = op.outputs[0]
    perm = [int(p) for p in op.node.attrs["perm"]]
    xs = contiguous_strides(x.info.shape)
    shape, (ss, ds) = collapse(y.info.shape, [xs[p] for p in perm], contiguous_strides(y.info.shape))
    launch_float_copy(b, b.tensor(x), b.tensor(y), shape, ss, ds, residual=b.tensor(r))

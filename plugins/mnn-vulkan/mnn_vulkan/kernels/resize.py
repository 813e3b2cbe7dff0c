"""Resize of NCHW images (resize.comp): the per-axis source indices and weights are
computed on the host, as the reference computes them, and uploaded once."""

from __future__ import annotations

import numpy as np

from mnn_core.gpu.params import pack

from . import register


def _nearest(coord, size, mode):
    if mode == "floor":
        idx = np.floor(coord)
    elif mode == "ceil":
        idx = np.ceil(coord)
    else:  # nearest; exact halves go the preferred way
        half = coord - np.floor(coord) == 0.5
        idx = np.where(half, np.floor(coord) if mode == "round_prefer_floor" else np.ceil(coord), np.round(coord))
    return np.clip(idx, 0, size - 1)


def axis_table(out_size, in_size, scale, attrs) -> np.ndarray:
    """(lo, hi, w_lo, w_hi) per output position of one axis."""
    from mnn_core.ops.resize import source_coordinate

    if out_size == in_size and scale == 1.0:  # an unscaled axis samples itself
        i = np.arange(out_size, dtype=np.float64)
        return np.stack([i, i, np.ones_like(i), np.zeros_like(i)], axis=1)
    coord = source_coordinate(out_size, in_size, scale, attrs["coordinate_transformation_mode"])
    if attrs["mode"] == "nearest":
        idx = _nearest(coord, in_size, attrs["nearest_mode"])
        return np.stack([idx, idx, np.ones_like(idx), np.zeros_like(idx)], axis=1)
    coord = np.clip(coord, 0, in_size - 1)
    lo = np.floor(coord)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = coord - lo
    return np.stack([lo, hi, 1.0 - frac, frac], axis=1)


def _record(op, rec):
    from mnn_core.ops.resize import resize_plan

    x, y = op.inputs[0], op.outputs[0]
    _, _, h, w = x.info.shape
    (oh, ow), (sh, sw) = resize_plan(x.info.shape, op.node.attrs)
    if y.info.size == 0:
        return
    table = np.concatenate([axis_table(oh, h, sh, op.node.attrs), axis_table(ow, w, sw, op.node.attrs)])
    push = pack(y.info.size, h, w, oh, ow)
    rec.elementwise("resize", [rec.tensor(x), rec.constant(table.astype(np.float32)), rec.output(y)], push, y.info.size)


register("Resize", _record, efficiency=0.5)

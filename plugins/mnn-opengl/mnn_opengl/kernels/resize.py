"""Resize of NCHW images (resize.comp), nearest or linear: each output row and
column's two source indices and weights are computed on the host in float64,
with the core's own coordinate transform, and stored with the dispatch's
parameters (uploaded once)."""

from __future__ import annotations

import numpy as np

from ..recorder import element, words
from . import register


def _nearest(coord, size, mode):
    if mode == "floor":
        idx = np.floor(coord)
    elif mode == "ceil":
        idx = np.ceil(coord)
    else:  # round to nearest; an exact half goes the way the mode prefers
        half = coord - np.floor(coord) == 0.5
        idx = np.where(half, np.floor(coord) if mode == "round_prefer_floor" else np.ceil(coord), np.round(coord))
    return np.clip(idx, 0, size - 1)


def axis_table(out_size: int, in_size: int, scale: float, attrs) -> list:
    """[lo, hi, w_lo, w_hi] per output position of one axis, flattened (indices int, weights float)."""
    from mnn_core.ops.resize import source_coordinate

    if out_size == in_size and scale == 1.0:  # an unscaled axis samples itself in every mode
        lo = hi = np.arange(out_size, dtype=np.float64)
        wlo, whi = np.ones(out_size), np.zeros(out_size)
    else:
        coord = source_coordinate(out_size, in_size, scale, attrs["coordinate_transformation_mode"])
        if attrs["mode"] == "nearest":
            lo = hi = _nearest(coord, in_size, attrs["nearest_mode"])
            wlo, whi = np.ones(out_size), np.zeros(out_size)
        else:
            coord = np.clip(coord, 0, in_size - 1)
            lo = np.floor(coord)
            hi = np.minimum(lo + 1, in_size - 1)
            whi = coord - lo
            wlo = 1.0 - whi
    out = []
    for a, b, wa, wb in zip(lo, hi, wlo, whi):
        out += [int(a), int(b), float(wa), float(wb)]
    return out


def _record(op, rec):
    from mnn_core.ops.resize import resize_plan

    x, y = op.inputs[0], op.outputs[0]
    _, _, h, w = x.info.shape
    (oh, ow), (sh, sw) = resize_plan(x.info.shape, op.node.attrs)
    if y.info.size == 0:
        return
    table = axis_table(oh, h, sh, op.node.attrs) + axis_table(ow, w, sw, op.node.attrs)
    params = [y.info.size, h, w, oh, ow, element(x), element(y)] + words(*table)
    rec.elementwise("resize", params, [x], [y], y.info.size)


def _supports(node, ins):
    if len(ins) > 1 and any(i is not None for i in ins[1:]):
        return "Resize with roi/scales/sizes as inputs (only as attributes)"
    return True


register("Resize", _record, _supports, efficiency=0.5)

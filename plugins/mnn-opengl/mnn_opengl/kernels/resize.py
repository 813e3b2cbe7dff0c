"""Resize of NCHW images (resize.comp), nearest or linear: each output row and
column's two source indices and weights are computed on the host in float64,
with the core's own coordinate transform, and stored with the dispatch's
parameters (uploaded once)."""

from __future__ import annotations

from mnn_core.backend.kit.params import resize_tables
from mnn_core.ops.resize import resize_2d_supports

from ..recorder import element, words
from . import register


def _record(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.size == 0:
        return
    (h, w, oh, ow), table = resize_tables(x.info.shape, op.node.attrs)
    flat = []  # [lo, hi, w_lo, w_hi] per output row, then per output column: indices int, weights float
    for lo, hi, wlo, whi in table:
        flat += [int(lo), int(hi), float(wlo), float(whi)]
    params = [y.info.size, h, w, oh, ow, element(x), element(y)] + words(*flat)
    rec.elementwise("resize", params, [x], [y], y.info.size)


def _supports(node, ins):
    if len(ins) > 1 and any(i is not None for i in ins[1:]):
        return "Resize with roi/scales/sizes as inputs (only as attributes)"
    return resize_2d_supports(node, ins)  # cubic, antialias, roi, N-D fall back


register("Resize", _record, _supports, efficiency=0.5)

"""Resize of NCHW images (resize.comp), nearest or linear: each output row and
column's two source indices and weights are computed on the host in float64,
with the core's own coordinate transform, and stored with the dispatch's
parameters (uploaded once)."""

from __future__ import annotations

from mnn_core.gpu.params import resize_axis_table

from ..recorder import element, words
from . import register


def axis_table(out_size: int, in_size: int, scale: float, attrs) -> list:
    """[lo, hi, w_lo, w_hi] per output position of one axis, flattened (indices int, weights float)."""
    out = []
    for lo, hi, wlo, whi in resize_axis_table(out_size, in_size, scale, attrs):
        out += [int(lo), int(hi), float(wlo), float(whi)]
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

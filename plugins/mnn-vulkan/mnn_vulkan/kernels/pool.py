"""MaxPool and AveragePool (pool2d.comp, geometry from the core's pool_geometry)."""

from __future__ import annotations

from ..recorder import pack
from . import register


def _record(op, rec):
    from mnn_core.ops.pool import pool_geometry

    x, y = op.inputs[0], op.outputs[0]
    attrs = op.node.attrs
    geo = pool_geometry(x.info.shape, attrs, op.node.op)
    _, _, h, w = x.info.shape
    _, _, oh, ow = geo["out"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    mode = 0 if op.node.op == "MaxPool" else 1
    push = pack(y.info.size, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, mode,
                int(attrs.get("count_include_pad", 0)))
    rec.elementwise("pool2d", [rec.tensor(x), rec.output(y)], push, y.info.size)


def _supports(node, ins):
    return True if len(ins[0].shape) == 4 else "2-D pooling over NCHW only"


register("MaxPool", _record, _supports, efficiency=0.5)
register("AveragePool", _record, _supports, efficiency=0.5)

"""MaxPool, AveragePool and GlobalAveragePool/GlobalMaxPool (pool2d.comp)."""

from __future__ import annotations

from mnn_core.backend.kit.geometry import pool_geometry

from ..recorder import element
from . import register


def _supports(node, ins):
    if len(ins[0].shape) != 4:
        return f"2-D pooling only (NCHW input), got rank {len(ins[0].shape)}"
    return True


def _record(op, rec, mode, geo):
    x, y = op.inputs[0], op.outputs[0]
    _, _, h, w = x.info.shape
    _, _, oh, ow = y.info.shape
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    params = [
        y.info.size,
        h,
        w,
        oh,
        ow,
        kh,
        kw,
        sh,
        sw,
        pt,
        pl,
        pb,
        pr,
        dh,
        dw,
        mode,
        int(geo.get("count_include_pad", 0)),
        element(x),
        element(y),
    ]
    rec.elementwise("pool2d", params, [x], [y], y.info.size)


def _record_local(op, rec):
    geo = dict(pool_geometry(op.inputs[0].info.shape, op.node.attrs, op.node.op))
    geo["count_include_pad"] = op.node.attrs.get("count_include_pad", 0)
    _record(op, rec, 0 if op.node.op == "MaxPool" else 1, geo)


def _record_global(op, rec):
    _, _, h, w = op.inputs[0].info.shape
    geo = dict(kernel=[h, w], strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0])
    _record(op, rec, 0 if op.node.op == "GlobalMaxPool" else 1, geo)


def _maxpool_supports(node, ins):
    if len(node.outputs) > 1 and node.outputs[1]:
        return "MaxPool's Indices output is not implemented"
    return _supports(node, ins)


register("MaxPool", _record_local, _maxpool_supports, efficiency=0.6)
register("AveragePool", _record_local, _supports, efficiency=0.6)
register("GlobalAveragePool", _record_global, _supports, efficiency=0.6)
register("GlobalMaxPool", _record_global, _supports, efficiency=0.6)

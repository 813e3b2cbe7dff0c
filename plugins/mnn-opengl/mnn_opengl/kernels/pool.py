"""MaxPool and AveragePool (pool2d.comp); GlobalAveragePool and GlobalMaxPool of any
spatial rank as a mean / max over the spatial elements of each (image, channel) row
(reduce.comp: a work group shares a large window)."""

from __future__ import annotations

from mnn_core.backend.kit.geometry import pool_geometry
from mnn_core.backend.kit.layout import numel
from mnn_core.backend.kit.params import pool_fields

from ..recorder import element
from . import register
from .loops import budgeted
from .reduce import REDUCE, record_reduce


def _supports(node, ins):
    if len(ins[0].shape) != 4:
        return f"2-D pooling only (NCHW input), got rank {len(ins[0].shape)}"
    return True


def _record(op, rec, mode: int, geo: dict, include_pad: int = 0):
    x, y = op.inputs[0], op.outputs[0]
    params = [*pool_fields(x.info.shape, y.info.shape, geo, mode, include_pad), element(x), element(y)]
    rec.elementwise("pool2d", params, [x], [y], y.info.size)


def _record_local(op, rec):
    geo = pool_geometry(op.inputs[0].info.shape, op.node.attrs, op.node.op)
    mode = 0 if op.node.op == "MaxPool" else 1
    _record(op, rec, mode, geo, op.node.attrs.get("count_include_pad", 0))


def _record_global(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    rows, count = numel(x.info.shape[:2]), numel(x.info.shape[2:])
    code = REDUCE["ReduceMax" if op.node.op == "GlobalMaxPool" else "ReduceMean"]
    record_reduce(rec, x, y, ([rows], [count]), ([count], [1]), count, code)


def _global_supports(node, ins):
    return True if len(ins[0].shape) >= 3 else f"a channel axis and a spatial one needed, got rank {len(ins[0].shape)}"


def _maxpool_supports(node, ins):
    if len(node.outputs) > 1 and node.outputs[1]:
        return "MaxPool's Indices output is not implemented"
    return _supports(node, ins)


def _window_passes(node, ins) -> int:
    kh, kw = node.attrs.get("kernel_shape", [1, 1])[-2:]
    return kh * (kw + 3) + 16


register("MaxPool", _record_local, budgeted(_maxpool_supports, _window_passes), efficiency=0.6)
register("AveragePool", _record_local, budgeted(_supports, _window_passes), efficiency=0.6)
register("GlobalAveragePool", _record_global, _global_supports, efficiency=0.6)
register("GlobalMaxPool", _record_global, _global_supports, efficiency=0.6)

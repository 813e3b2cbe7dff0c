"""MaxPool and AveragePool (pool2d.comp, geometry from the core's pool_geometry)."""

from __future__ import annotations

from mnn_core.backend.kit.params import pool_params

from . import register


def _record(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    rec.elementwise("pool2d", [rec.tensor(x), rec.output(y)], pool_params(op), y.info.size)


def _supports(node, ins):
    return True if len(ins[0].shape) == 4 else "2-D pooling over NCHW only"


register("MaxPool", _record, _supports, efficiency=0.5)
register("AveragePool", _record, _supports, efficiency=0.5)

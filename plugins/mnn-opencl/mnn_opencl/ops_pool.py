"""Pooling over NCHW: MaxPool, AveragePool (pads, strides, dilations,
ceil_mode, count_include_pad) and the global forms (kernels/pool.cl).
Claimed only when mnn-core has these schemas."""

from __future__ import annotations

from mnn_core.backend.kit.geometry import pool_geometry

from ._cl import LocalMem
from ._common import full_attrs, kernel, numel

REDUCE_LWS = 64


def _pool_supports(node, ins):
    return True if len(ins[0].shape) == 4 else "NCHW (4-D) input only"


def _build_pool(op, b):
    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    geo = pool_geometry(x.info.shape, attrs, op.node.op)
    n, c, h, w = x.info.shape
    _, _, oh, ow = geo["out"]
    total = numel(y.info.shape)
    (pt, pl, pb, pr), (kh, kw), (sh, sw), (dh, dw) = geo["pads"], geo["kernel"], geo["strides"], geo["dilations"]
    is_avg = int(op.node.op == "AveragePool")
    count_pad = int(attrs.get("count_include_pad", 0))
    b.launch(
        "pool2d",
        [b.tensor(x), b.tensor(y), total, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, is_avg, count_pad],
        (total,),
    )


def _build_global(op, b):
    x, y = op.inputs[0], op.outputs[0]
    n, c, h, w = x.info.shape
    groups = n * c
    b.launch(
        "global_pool",
        [b.tensor(x), b.tensor(y), groups, h * w, int(op.node.op == "GlobalAveragePool"), LocalMem(REDUCE_LWS * 4)],
        (groups * REDUCE_LWS,),
        (REDUCE_LWS,),
        tunable=False,
    )


for _op in ("MaxPool", "AveragePool"):
    kernel(_op, supports=_pool_supports)(_build_pool)
for _op in ("GlobalAveragePool", "GlobalMaxPool"):
    kernel(_op, supports=_pool_supports)(_build_global)

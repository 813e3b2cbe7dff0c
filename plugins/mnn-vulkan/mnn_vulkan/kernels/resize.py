"""Resize of NCHW images (resize.comp): the per-axis source indices and weights are
computed on the host, as the reference computes them, and uploaded once."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.params import pack, resize_tables
from mnn_core.ops.resize import resize_2d_supports

from . import register


def _record(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.size == 0:
        return
    (h, w, oh, ow), table = resize_tables(x.info.shape, op.node.attrs)
    push = pack(y.info.size, h, w, oh, ow)
    rec.elementwise("resize", [rec.tensor(x), rec.constant(table.astype(np.float32)), rec.output(y)], push, y.info.size)


register("Resize", _record, resize_2d_supports, efficiency=0.5)  # cubic, antialias, roi, N-D fall back

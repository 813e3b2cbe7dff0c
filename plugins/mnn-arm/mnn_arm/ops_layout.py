"""Concat for every dtype (it moves bytes); Reshape and friends are views the core handles."""

from __future__ import annotations

import numpy as np

from mnn_core.graph.ir import DTYPES
from mnn_core.ops._util import normalize_axis

from . import _arm
from ._common import kernel, prod, static_shape


@kernel("Concat", dtypes=DTYPES, efficiency=0.5)
def prepare_concat(node, ins, outs, constants, ctx):
    shapes = [static_shape(i) for i in ins]
    axis = normalize_axis(node.attrs["axis"], len(shapes[0]), "Concat")
    return _arm.concat("arm.Concat", prod(shapes[0][:axis]), [prod(s[axis:]) for s in shapes],
                       np.dtype(ins[0].dtype).itemsize)

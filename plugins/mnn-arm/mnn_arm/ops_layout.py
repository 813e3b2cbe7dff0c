"""Concat for every dtype (it moves bytes); Reshape and friends are views: the core aliases them
where it can, else they are a byte copy here (the core copies only host memory, not the fp16 domain's)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend import CostEstimate, KernelSpec
from mnn_core.graph.ir import DTYPES
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.schema import view_ops

from . import _arm, half
from ._common import kernel, prod, register, static_shape


def _elem_bytes(info, ctx) -> int:
    return 2 if half.half_activations(ctx) and half.stored_half(info) else np.dtype(info.dtype).itemsize


@kernel("Concat", half_native=True, dtypes=DTYPES, efficiency=0.5)
def prepare_concat(node, ins, outs, constants, ctx):
    shapes = [static_shape(i) for i in ins]
    axis = normalize_axis(node.attrs["axis"], len(shapes[0]), "Concat")
    return _arm.concat("arm.Concat", prod(shapes[0][:axis]), [prod(s[axis:]) for s in shapes], _elem_bytes(ins[0], ctx))


def prepare_view_copy(node, ins, outs, constants, ctx):
    return _arm.concat(f"arm.{node.op} (copy)", 1, [prod(static_shape(outs[0]))], _elem_bytes(outs[0], ctx))


def _view_cost(*_args) -> CostEstimate:
    return CostEstimate(0.0)  # as the core's own view: usually an alias, no step at all


for _op in sorted(view_ops()):
    register(KernelSpec(_op, dtypes=DTYPES, inplace=True, cost=_view_cost), prepare_view_copy, half_native=True)

"""Pooling on x86: MaxPool, AveragePool (kernel over padded scratch planes; 1-D as planes one row high),
GlobalAveragePool and GlobalMaxPool (one vector reduction per plane, of any number of spatial axes).

Padding and the ceil_mode overhang are -inf for max and 0 for average; an
average divides by the window's row count times its column count, counted
by the schema's rules in the kit (window.pool_divisors: count_include_pad
counts padding, never the overhang), so the C kernel knows no convention.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.geometry import pool_geometry
from mnn_core.backend.kit.window import pool_divisors
from mnn_core.errors import BackendError

from . import _x86
from ._common import kernel, pool_params, static_shape
from .layouts import BLOCK, NC16, channels
from .ops_spatial import lift_1d


def _window_supports(node, ins):
    return True if len(ins[0].shape) in (3, 4) else "only 1-D (NCL) and 2-D (NCHW) input"


def _prepare_pool(node, ins, outs, constants, ctx, isa, kind):
    if len(static_shape(ins[0])) == 3:  # 1-D: the 2-D pooling of a plane one row high
        node, ins, outs, constants = lift_1d(node, ins, outs, constants)
    x = static_shape(ins[0])
    geo = pool_geometry(x, node.attrs, node.op)
    n, c = x[:2]
    inv_rows, inv_cols = pool_divisors(x, geo, bool(node.attrs.get("count_include_pad", 0)))
    # NC16 sides (layouts.py chose them): the planes are blocks of 16 channels, pooled as vectors
    nc16 = ins[0].layout == NC16
    if nc16 != (outs[0].layout == NC16):
        raise BackendError(
            f"x86: {node.name} pools between NC16 and another layout (mnn_x86/layouts.py should "
            "have chosen one for both)"
        )
    p = dict(pool_params(x, geo), nc16=int(nc16))
    planes = n * channels(c) // BLOCK if nc16 else n * c
    return _x86.pool(isa, ctx.threads, f"x86.{node.op}", planes, p, kind, inv_rows, inv_cols)


@kernel("MaxPool", supports=_window_supports, efficiency=0.3)
def prepare_maxpool(node, ins, outs, constants, ctx, isa):
    return _prepare_pool(node, ins, outs, constants, ctx, isa, 0)


@kernel("AveragePool", supports=_window_supports, efficiency=0.3)
def prepare_avgpool(node, ins, outs, constants, ctx, isa):
    return _prepare_pool(node, ins, outs, constants, ctx, isa, 1)


def _global_supports(node, ins):
    return True if len(ins[0].shape) >= 3 else "only (N, C, D1, ...) input"


def _prepare_global(node, ins, outs, constants, ctx, isa, kind):
    x = static_shape(ins[0])  # any number of spatial axes: rows of their product
    return _x86.reduce(isa, ctx.threads, f"x86.{node.op}", x[0] * x[1], int(np.prod(x[2:], dtype=np.int64)), kind)


@kernel("GlobalAveragePool", supports=_global_supports, efficiency=0.3)
def prepare_global_avg(node, ins, outs, constants, ctx, isa):
    return _prepare_global(node, ins, outs, constants, ctx, isa, 1)


@kernel("GlobalMaxPool", supports=_global_supports, efficiency=0.3)
def prepare_global_max(node, ins, outs, constants, ctx, isa):
    return _prepare_global(node, ins, outs, constants, ctx, isa, 0)

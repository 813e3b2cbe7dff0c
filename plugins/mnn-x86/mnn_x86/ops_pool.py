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
from mnn_core.graph.ir import Node

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
    # NC16 sides (layouts.py chose them): the planes are blocks of 16 channels, pooled as vectors; an
    # output of one pixel of whole blocks is the same bytes in either layout (layouts.py)
    nc16 = ins[0].layout == NC16
    one_pixel = tuple(outs[0].shape[2:]) == (1, 1) and c % BLOCK == 0
    if nc16 != (outs[0].layout == NC16) and not one_pixel:
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
    if ins[0].layout == NC16:  # a 2-D plane of whole blocks (layouts.py): the pooling of one window
        op = "AveragePool" if kind else "MaxPool"
        attrs = dict(kernel_shape=list(x[2:]), strides=[1, 1], pads=[0] * 4, ceil_mode=0, auto_pad="NOTSET")
        window = Node(op, node.inputs, node.outputs, attrs, node.name)
        return _prepare_pool(window, ins, outs, constants, ctx, isa, kind)
    return _x86.reduce(isa, ctx.threads, f"x86.{node.op}", x[0] * x[1], int(np.prod(x[2:], dtype=np.int64)), kind)


@kernel("GlobalAveragePool", supports=_global_supports, efficiency=0.3)
def prepare_global_avg(node, ins, outs, constants, ctx, isa):
    return _prepare_global(node, ins, outs, constants, ctx, isa, 1)


@kernel("GlobalMaxPool", supports=_global_supports, efficiency=0.3)
def prepare_global_max(node, ins, outs, constants, ctx, isa):
    return _prepare_global(node, ins, outs, constants, ctx, isa, 0)

"""Pooling: MaxPool / AveragePool over zero- or -inf-padded planes (the
average's divisor per output row and column by the schema's rules, from the
kit's pool_divisors), GlobalAveragePool / GlobalMaxPool as row reductions.
In the fp16 domain (half.py) all four read and write the halves as they are.
MaxPool on uint8 / int8 (an int8 graph's pooling) compares the stored values:
max is order-preserving, so the scale and zero point pass through untouched."""

from __future__ import annotations

from mnn_core.backend.kit.geometry import pool_geometry
from mnn_core.backend.kit.window import pool_divisors, pool_params

from . import _arm, half
from ._common import kernel, static_shape
from .ops_qlinear import QDTYPES

#: the stored integer dtypes MaxPool takes (its C kernel's qdtype codes)
INT_DTYPES = ("uint8", "int8")


def _pool_supports(node, ins):
    return True if len(ins[0].shape) == 4 else "only NCHW (4-D) input"


def _maxpool_supports(node, ins):
    if ins[0].dtype in INT_DTYPES and len(node.outputs) > 1 and node.outputs[1]:
        return f"no Indices output on {ins[0].dtype}"
    return _pool_supports(node, ins)


def _prepare_pool(node, ins, kind, ctx):
    x = static_shape(ins[0])
    geo = pool_geometry(x, node.attrs, node.op)
    inv_rows, inv_cols = pool_divisors(x, geo, bool(node.attrs.get("count_include_pad", 0)))
    threads = max(1, int(getattr(ctx, "threads", 1) or 1))
    halves = half.half_activations(ctx)
    return _arm.pool(f"arm.{node.op}", x[0] * x[1], pool_params(x, geo), kind, inv_rows, inv_cols, threads, halves)


@kernel("MaxPool", half_native=True, dtypes=("float32", *INT_DTYPES), supports=_maxpool_supports, efficiency=0.3)
def prepare_maxpool(node, ins, outs, constants, ctx):
    if ins[0].dtype not in INT_DTYPES:
        return _prepare_pool(node, ins, 0, ctx)
    x = static_shape(ins[0])
    p = pool_params(x, pool_geometry(x, node.attrs, node.op))
    threads = max(1, int(getattr(ctx, "threads", 1) or 1))
    return _arm.qmaxpool(f"arm.{node.op}.{ins[0].dtype}", QDTYPES[ins[0].dtype], x[0] * x[1], p, threads)


@kernel("AveragePool", half_native=True, supports=_pool_supports, efficiency=0.3)
def prepare_avgpool(node, ins, outs, constants, ctx):
    return _prepare_pool(node, ins, 1, ctx)


@kernel("GlobalAveragePool", half_native=True, supports=_pool_supports, efficiency=0.3)
def prepare_global_avg(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    return _arm.reduce("arm.GlobalAveragePool", n * c, h * w, 1, half.half_activations(ctx))


@kernel("GlobalMaxPool", half_native=True, supports=_pool_supports, efficiency=0.3)
def prepare_global_max(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    return _arm.reduce("arm.GlobalMaxPool", n * c, h * w, 0, half.half_activations(ctx))

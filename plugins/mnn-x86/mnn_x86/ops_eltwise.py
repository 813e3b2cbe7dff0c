"""Element-wise ops on x86: broadcasting binary arithmetic and activations.

Binary ops collapse the broadcast into the fewest dims (size-1 axes dropped,
neighbours merged where both inputs continue contiguously): same-shape is one
contiguous run, a scalar or channel broadcast a run against a broadcast
value. The kernel walks up to 8 collapsed dims, so every numpy broadcast the
C ABI can describe runs here.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import KernelSpec
from mnn_core.backend.kit.activation import clip_float32
from mnn_core.backend.kit.layout import collapse_broadcast
from mnn_core.ops.elementwise import ACTIVATION_OPS

from . import _x86, ops_math
from ._common import ACT_CODES, register, static_shape
from .layouts import NC16, nbytes

#: enum x86_binop in csrc/x86.h
BINARY_CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5}
MAX_DIMS = 8  # MNN_MAX_DIMS of the C ABI


def _binary_supports(node, ins):
    if ins[0].dtype != "float32":
        return ops_math.binary_supports(node, ins)
    a, b = static_shape(ins[0]), static_shape(ins[1])
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims after collapsing"
    return True


def _prepare_binary(node, ins, outs, constants, ctx, isa):
    if ins[0].dtype != "float32":  # integers and float64: csrc/math
        return ops_math.prepare_binary(node, ins, outs, constants, ctx, isa)
    if outs[0].layout == NC16:  # same-shape NC16 tensors (layouts.py): one run over the blocks, padding too
        n = nbytes(outs[0]) // 4
        return _x86.binary(isa, ctx.threads, f"x86.{node.op}", BINARY_CODES[node.op], [n], [1], [1])
    a, b = static_shape(ins[0]), static_shape(ins[1])
    dims, sa, sb = collapse_broadcast(static_shape(outs[0]), a, b, MAX_DIMS)
    return _x86.binary(isa, ctx.threads, f"x86.{node.op}", BINARY_CODES[node.op], dims, sa, sb)


for _op in BINARY_CODES:
    register(
        KernelSpec(_op, dtypes=("float32",) + ops_math.NUMERIC[1:], supports=_binary_supports, efficiency=0.5),
        _prepare_binary,
    )


def _prepare_activation(node, ins, outs, constants, ctx, isa):
    if ins[0].dtype != "float32":  # Clip of float64 and integers: csrc/math
        return ops_math.prepare_clip(node, ins, outs, constants, ctx, isa)
    kind, params = ACTIVATION_OPS[node.op]
    values = {k: float(node.attrs[v]) for k, v in params.items()}
    alpha, beta = values.get("alpha", 0.0), values.get("beta", 0.0)
    if kind == "clip":  # absent (infinite) bounds are float32's extremes, as ONNX defines Clip
        alpha, beta = clip_float32(alpha, beta)
    return _x86.unary(isa, ctx.threads, f"x86.{node.op}", ACT_CODES[kind], alpha, beta)


for _op in ACTIVATION_OPS:
    dtypes = ("float32",) + ops_math.NUMERIC[1:] if _op == "Clip" else ("float32",)
    register(KernelSpec(_op, dtypes=dtypes, inplace=True, efficiency=0.5), _prepare_activation)

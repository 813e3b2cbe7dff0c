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
from mnn_core.ops.elementwise import ACTIVATION_OPS

from . import _x86
from ._common import ACT_CODES, register, static_shape
from .layouts import NC16, nbytes

#: enum x86_binop in csrc/x86.h
BINARY_CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5}
MAX_DIMS = 8  # MNN_MAX_DIMS of the C ABI


def _contiguous_strides(shape: tuple) -> list[int]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def collapse_broadcast(out: tuple, a: tuple, b: tuple):
    """(dims, a strides, b strides) with broadcast axes at stride 0, size-1 axes
    dropped and neighbours merged where both inputs continue contiguously."""
    nd = len(out)
    shapes = [(1,) * (nd - len(s)) + tuple(s) for s in (a, b)]
    strides = [[0 if d == 1 else st for d, st in zip(s, _contiguous_strides(s))] for s in shapes]
    dims, sa, sb = [], [], []
    for i, d in enumerate(out):
        if d == 1:
            continue
        if dims and all(s[-1] == st[i] * d for s, st in ((sa, strides[0]), (sb, strides[1]))):
            dims[-1] *= d
            sa[-1], sb[-1] = strides[0][i], strides[1][i]
            continue
        dims.append(d)
        sa.append(strides[0][i])
        sb.append(strides[1][i])
    if len(dims) > MAX_DIMS:
        return None
    if not dims:  # every axis is 1: one element
        return [1], [0], [0]
    return dims, sa, sb


def _binary_supports(node, ins):
    a, b = static_shape(ins[0]), static_shape(ins[1])
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims after collapsing"
    return True


def _prepare_binary(node, ins, outs, constants, ctx, isa):
    if outs[0].layout == NC16:  # same-shape NC16 tensors (layouts.py): one run over the blocks, padding too
        n = nbytes(outs[0]) // 4
        return _x86.binary(isa, ctx.threads, f"x86.{node.op}", BINARY_CODES[node.op], [n], [1], [1])
    a, b = static_shape(ins[0]), static_shape(ins[1])
    dims, sa, sb = collapse_broadcast(static_shape(outs[0]), a, b)
    return _x86.binary(isa, ctx.threads, f"x86.{node.op}", BINARY_CODES[node.op], dims, sa, sb)


for _op in BINARY_CODES:
    register(KernelSpec(_op, supports=_binary_supports, efficiency=0.5), _prepare_binary)


def _prepare_activation(node, ins, outs, constants, ctx, isa):
    kind, params = ACTIVATION_OPS[node.op]
    values = {k: float(node.attrs[v]) for k, v in params.items()}
    return _x86.unary(isa, ctx.threads, f"x86.{node.op}", ACT_CODES[kind], values.get("alpha", 0.0),
                      values.get("beta", 0.0))


for _op in ACTIVATION_OPS:
    register(KernelSpec(_op, inplace=True, efficiency=0.5), _prepare_activation)

"""Element-wise ops: broadcasting binary arithmetic (collapsed to the fewest
dims, size-1 axes at stride 0) and activations."""

from __future__ import annotations

import numpy as np

from mnn_core.backend import KernelSpec
from mnn_core.backend.kit.layout import collapse_broadcast
from mnn_core.ops.elementwise import ACTIVATION_OPS

from . import _arm, half
from ._common import ACT_CODES, register, static_shape

#: enum arm_binop in csrc/arm.h
BINARY_CODES = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Max": 4, "Min": 5}
MAX_DIMS = 8  # MNN_MAX_DIMS of the C ABI


#: int32 / int64 operands: through the broadcasting integer kernel of csrc/math.c (enum arm_bin2_kind)
INT_CODES = {"Add": 9, "Sub": 10, "Mul": 11, "Max": 12, "Min": 13}
INT_DTYPES = ("int32", "int64")


def _binary_supports(node, ins):
    if ins[0].dtype != ins[1].dtype:
        return "inputs of one dtype"
    if ins[0].dtype in INT_DTYPES and node.op not in INT_CODES:
        return f"{node.op} of integers (float32 only)"
    a, b = static_shape(ins[0]), static_shape(ins[1])
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims"
    return True


def _prepare_binary(node, ins, outs, constants, ctx):
    a, b = static_shape(ins[0]), static_shape(ins[1])
    dims, sa, sb = collapse_broadcast(static_shape(outs[0]), a, b, MAX_DIMS)
    if ins[0].dtype in INT_DTYPES:
        size = np.dtype(ins[0].dtype).itemsize
        code = {"int32": 2, "int64": 3}[ins[0].dtype]  # ops_math.DTYPE_CODES
        return _arm.bin2(f"arm.{node.op}", INT_CODES[node.op], code, size, size, dims, sa, sb)
    return _arm.binary(f"arm.{node.op}", BINARY_CODES[node.op], dims, sa, sb, half.half_activations(ctx))


for _op in BINARY_CODES:
    spec = KernelSpec(_op, dtypes=("float32",) + INT_DTYPES, supports=_binary_supports, efficiency=0.5)
    register(spec, _prepare_binary, half_native=True)


def _prepare_activation(node, ins, outs, constants, ctx):
    kind, params = ACTIVATION_OPS[node.op]
    values = {k: float(node.attrs[v]) for k, v in params.items()}
    return _arm.unary(
        f"arm.{node.op}", ACT_CODES[kind], values.get("alpha", 0.0), values.get("beta", 0.0), half.half_activations(ctx)
    )


for _op in ACTIVATION_OPS:
    register(KernelSpec(_op, inplace=True, efficiency=0.5), _prepare_activation, half_native=True)

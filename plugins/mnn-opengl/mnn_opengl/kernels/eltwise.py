"""Element-wise ops: broadcasting binary arithmetic (binary.comp; int32/int64 in
ibinary.comp) and unary math and activations (unary.comp; codes shared with the
fused activations in act.glsl)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.codes import BINARY, UNARY, unary_code
from mnn_core.backend.kit.layout import broadcast_plan, pad_to

from ..recorder import element
from . import KERNELS, register

#: integer ops of ibinary.comp, per dtype
INT_OPS = {"int32": ("Add", "Sub", "Mul", "Div", "Max", "Min"), "int64": ("Add", "Sub", "Mul", "Max", "Min")}


def broadcast_params(a, b, y, dims, sa, sb) -> list:
    """The operand fields of a broadcasting two-input shader (binary, ibinary, compare): where a, b
    and y start, then the collapsed dims and both inputs' strides, each padded to 6."""
    return [element(a), element(b), element(y), pad_to(dims, 6, 1), pad_to(sa, 6), pad_to(sb, 6)]


def _binary_supports(node, ins):
    if len(ins) != 2 or any(i is None for i in ins):
        return f"{node.op} takes two inputs"
    dtype = ins[0].dtype
    if dtype != "float32" and node.op not in INT_OPS.get(dtype, ()):
        return f"{node.op} of {dtype} tensors is not implemented"
    dims, _ = broadcast_plan(tuple(np.broadcast_shapes(ins[0].shape, ins[1].shape)), ins[0].shape, ins[1].shape)
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _record_binary(op, rec):
    a, b = op.inputs
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    if a.info.dtype != "float32":
        params = [y.info.size, len(dims), BINARY[op.node.op], int(a.info.dtype == "int64")]
        params += broadcast_params(a, b, y, dims, sa, sb)
        rec.elementwise("ibinary", params, [a, b], [y], y.info.size)
        return
    params = [y.info.size, len(dims), BINARY[op.node.op], 0, 0.0, 0.0, *broadcast_params(a, b, y, dims, sa, sb)]
    rec.elementwise("binary", params, [a, b], [y], y.info.size)


def _record_unary(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    params = [y.info.size, *unary_code(op.node.op, op.node.attrs), element(x), element(y)]
    rec.elementwise("unary", params, [x], [y], y.info.size)


def _unary_supports(node, ins):
    if node.op == "Clip" and len(ins) > 1:
        return "Clip with min/max as inputs (only as attributes)"
    return True


KERNELS.register_binary(_record_binary, _binary_supports)
for _op in UNARY:
    register(_op, _record_unary, _unary_supports, inplace=True, efficiency=0.8)

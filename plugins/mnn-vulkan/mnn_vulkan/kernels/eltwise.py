"""Element-wise ops: broadcasting binary arithmetic (binary.comp; int32/int64 in
ibinary.comp) and unary math and activations (unary.comp, codes shared with
the fused activations in act.glsl: mnn_core.backend.kit.codes)."""

from __future__ import annotations

from mnn_core.backend.kit.codes import BINARY, UNARY
from mnn_core.backend.kit.layout import broadcast_plan, pad6
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.shader_ops import binary_supports, record_binary, record_unary

from ..recorder import HALF_OPS
from . import KERNELS, register

#: integer ops of ibinary.comp, per dtype
INT_OPS = {"int32": ("Add", "Sub", "Mul", "Div", "Max", "Min"), "int64": ("Add", "Sub", "Mul", "Max", "Min")}


def _binary_supports(node, ins):
    dtype = ins[0].dtype
    if dtype != "float32" and node.op not in INT_OPS.get(dtype, ()):
        return f"{node.op} of {dtype} tensors is not implemented (float32 only)"
    return binary_supports(node, ins)


def _record_binary(op, rec, act=(0, 0.0, 0.0)):
    a, b = op.inputs
    y = op.outputs[0]
    if a.info.dtype == "float32":
        record_binary(op, rec, act)
        return
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    push = pack(
        y.info.size, len(dims), BINARY[op.node.op], int(a.info.dtype == "int64"), pad6(dims, 1), pad6(sa), pad6(sb)
    )
    rec.elementwise("ibinary", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, y.info.size)


def record_fused(op, act, rec):
    """The binary op with the activation that follows it, as one dispatch."""
    _record_binary(op, rec, act)


KERNELS.register_binary(_record_binary, _binary_supports)
for _op in UNARY:
    register(_op, record_unary, inplace=True, efficiency=0.8)
HALF_OPS.update(UNARY)  # unary.comp has a float16 variant

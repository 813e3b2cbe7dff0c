"""The int8 graph's glue on Arm (csrc/qlinear.c), bit-exact with mnn_core/ops/quant.py: QuantizeLinear
(float32 -> uint8/int8 per tensor or per axis), DequantizeLinear (uint8/int8/int32 -> float32) and
QLinearAdd (uint8/int8, broadcasting), so a post-training-quantized graph (QLinearConv / QLinearMatMul
between them) runs whole on Arm. Scales and zero points must be constants; blocked quantization is
declined."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.layout import collapse_broadcast
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.quant import add_multipliers

from . import _arm
from ._common import kernel, prod, static_shape

#: enum arm_qdtype of csrc/qlinear.h
QDTYPES = {"uint8": 0, "int8": 1, "int32": 2}
MAX_DIMS = 8


def _constant(constants, node, i, what, default=None):
    name = node.inputs[i] if len(node.inputs) > i else ""
    if not name:
        return default
    value = constants.get(name)
    if value is None:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError(f"arm {node.op} needs a constant {what} (a graph input was given)")
    return np.asarray(value)


def _quant_supports(node, ins):
    if node.attrs.get("block_size", 0):
        return "blocked quantization (block_size > 0)"
    out = ins[2].dtype if len(ins) > 2 and ins[2] is not None else (node.attrs.get("output_dtype") or "uint8")
    if ins[0].dtype != "float32" or out not in ("uint8", "int8"):
        return f"float32 to uint8 / int8 only, not {ins[0].dtype} to {out}"
    return True


def _layout(node, shape, scale) -> tuple[int, int, int]:
    """[outer][C][inner] about the quantization axis (C = 1 for one scale)."""
    if scale.size == 1 or not shape:
        return 1, 1, prod(shape)
    axis = normalize_axis(node.attrs.get("axis", 1), len(shape), node.op)
    if scale.size != shape[axis]:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError(f"arm {node.op}: {scale.size} scales for axis {axis} of {shape}")
    return prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])


@kernel("QuantizeLinear", dtypes=("float32", "uint8", "int8"), supports=_quant_supports, efficiency=0.5)
def prepare_quantize(node, ins, outs, constants, ctx):
    scale = _constant(constants, node, 1, "scale")
    zp = _constant(constants, node, 2, "zero point", np.zeros(1, np.int64))
    outer, c, inner = _layout(node, static_shape(ins[0]), scale)
    return _arm.quant("arm.QuantizeLinear", False, QDTYPES[outs[0].dtype], outer, c, inner, scale, zp)


def _dequant_supports(node, ins):
    if node.attrs.get("block_size", 0):
        return "blocked quantization (block_size > 0)"
    if (node.attrs.get("output_dtype") or "float32") != "float32" or ins[1].dtype != "float32":
        return "float32 output only"
    return True


@kernel("DequantizeLinear", dtypes=("uint8", "int8", "int32", "float32"), supports=_dequant_supports, efficiency=0.5)
def prepare_dequantize(node, ins, outs, constants, ctx):
    scale = _constant(constants, node, 1, "scale")
    zp = _constant(constants, node, 2, "zero point", np.zeros(1, np.int64))
    outer, c, inner = _layout(node, static_shape(ins[0]), scale)
    return _arm.quant("arm.DequantizeLinear", True, QDTYPES[ins[0].dtype], outer, c, inner, scale, zp)


def _qadd_supports(node, ins):
    a, b = static_shape(ins[0]), static_shape(ins[3])
    if ins[0].dtype not in ("uint8", "int8"):
        return "uint8 / int8 only"
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims"
    return True


@kernel("QLinearAdd", dtypes=("uint8", "int8", "float32"), supports=_qadd_supports, efficiency=0.5)
def prepare_qlinear_add(node, ins, outs, constants, ctx):
    sa, za = _constant(constants, node, 1, "A_scale"), _constant(constants, node, 2, "A_zero_point")
    sb, zb = _constant(constants, node, 4, "B_scale"), _constant(constants, node, 5, "B_zero_point")
    sc, zc = _constant(constants, node, 6, "C_scale"), _constant(constants, node, 7, "C_zero_point")
    ma, mb = add_multipliers(sa, sb, sc)
    a, b = static_shape(ins[0]), static_shape(ins[3])
    dims, st_a, st_b = collapse_broadcast(static_shape(outs[0]), a, b, MAX_DIMS)
    z = [int(np.asarray(v).reshape(-1)[0]) for v in (za, zb, zc)]
    return _arm.qadd("arm.QLinearAdd", QDTYPES[outs[0].dtype], dims, st_a, st_b, float(ma), float(mb), *z)

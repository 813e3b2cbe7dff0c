"""The int8 graph's glue on Arm (csrc/qlinear.c), bit-exact with mnn_core/ops/quant.py: QuantizeLinear
(float32 -> uint8/int8 per tensor or per axis), DequantizeLinear (uint8/int8/int32 -> float32) and
QLinearAdd (uint8/int8, broadcasting), so a post-training-quantized graph (QLinearConv / QLinearMatMul
between them) runs whole on Arm. Scales and zero points are packed at prepare when constant, read at
run otherwise; blocked quantization is declined."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.layout import collapse_broadcast
from mnn_core.ops.helpers import normalize_axis
from mnn_core.ops.quant import add_multipliers

from . import _arm
from ._common import kernel, prod, static_shape
from .qlut import DEQUANTIZE_LUT, QLINEAR_LUT, lut_table

#: enum arm_qdtype of csrc/qlinear.h
QDTYPES = {"uint8": 0, "int8": 1, "int32": 2}
MAX_DIMS = 8


def _param(constants, node, i):
    """A scale or zero point: its constant value, or None where it arrives at run (or is absent)."""
    name = node.inputs[i] if len(node.inputs) > i else ""
    value = constants.get(name) if name else None
    return None if value is None else np.asarray(value)


def _has(node, i) -> bool:
    return len(node.inputs) > i and bool(node.inputs[i])


def _quant_supports(node, ins):
    if node.attrs.get("block_size", 0):
        return "blocked quantization (block_size > 0)"
    out = ins[2].dtype if len(ins) > 2 and ins[2] is not None else (node.attrs.get("output_dtype") or "uint8")
    if ins[0].dtype != "float32" or out not in ("uint8", "int8"):
        return f"float32 to uint8 / int8 only, not {ins[0].dtype} to {out}"
    return True


def _layout(node, shape, n_scales: int) -> tuple[int, int, int]:
    """[outer][C][inner] about the quantization axis (C = 1 for one scale; the core checked the sizes)."""
    if n_scales == 1 or not shape:
        return 1, 1, prod(shape)
    axis = normalize_axis(node.attrs.get("axis", 1), len(shape), node.op)
    return prod(shape[:axis]), shape[axis], prod(shape[axis + 1 :])


def _prepare_quant(node, ins, constants, dequantize: bool, qdtype: str):
    scale, zp = _param(constants, node, 1), _param(constants, node, 2)
    if zp is None and not _has(node, 2):
        zp = np.zeros(1, np.int64)
    outer, c, inner = _layout(node, static_shape(ins[0]), prod(static_shape(ins[1])))
    return _arm.quant(f"arm.{node.op}", dequantize, QDTYPES[qdtype], outer, c, inner, scale, zp, 1, 2)


@kernel("QuantizeLinear", dtypes=("float32", "uint8", "int8"), supports=_quant_supports, efficiency=0.5)
def prepare_quantize(node, ins, outs, constants, ctx):
    return _prepare_quant(node, ins, constants, False, outs[0].dtype)


def _dequant_supports(node, ins):
    if node.attrs.get("block_size", 0):
        return "blocked quantization (block_size > 0)"
    if (node.attrs.get("output_dtype") or "float32") != "float32" or ins[1].dtype != "float32":
        return "float32 output only"
    return True


@kernel("DequantizeLinear", dtypes=("uint8", "int8", "int32", "float32"), supports=_dequant_supports, efficiency=0.5)
def prepare_dequantize(node, ins, outs, constants, ctx):
    return _prepare_quant(node, ins, constants, True, ins[0].dtype)


def _qadd_supports(node, ins):
    a, b = static_shape(ins[0]), static_shape(ins[3])
    if ins[0].dtype not in ("uint8", "int8"):
        return "uint8 / int8 only"
    if collapse_broadcast(tuple(np.broadcast_shapes(a, b)), a, b, MAX_DIMS) is None:
        return f"broadcast of {a} with {b} needs more than {MAX_DIMS} dims"
    return True


@kernel("QLinearAdd", dtypes=("uint8", "int8", "float32"), supports=_qadd_supports, efficiency=0.5)
def prepare_qlinear_add(node, ins, outs, constants, ctx):
    params = [_param(constants, node, i) for i in (1, 2, 4, 5, 6, 7)]
    a, b = static_shape(ins[0]), static_shape(ins[3])
    dims, st_a, st_b = collapse_broadcast(static_shape(outs[0]), a, b, MAX_DIMS)
    qdtype = QDTYPES[outs[0].dtype]
    if any(p is None for p in params):  # some arrive at run: all are read there
        return _arm.qadd("arm.QLinearAdd", qdtype, dims, st_a, st_b, 1.0, 1.0, 0, 0, 0, True)
    sa, za, sb, zb, sc, zc = params
    ma, mb = add_multipliers(sa, sb, sc)
    z = [int(v.reshape(-1)[0]) for v in (za, zb, zc)]
    return _arm.qadd("arm.QLinearAdd", qdtype, dims, st_a, st_b, float(ma), float(mb), *z)


@kernel(QLINEAR_LUT, dtypes=("uint8", "int8", "float32"), half_native=True)
def prepare_qlinear_lut(node, ins, outs, constants, ctx):
    """DequantizeLinear, element-wise float ops and QuantizeLinear as one byte table (qlut.py)."""
    return _arm.qlut(QLINEAR_LUT, lut_table(node, ins[0].dtype, constants))


@kernel(DEQUANTIZE_LUT, dtypes=("uint8", "int8", "float32"))
def prepare_dequantize_lut(node, ins, outs, constants, ctx):
    """DequantizeLinear and element-wise float ops as one table of 256 float32 (qlut.py)."""
    return _arm.qlut(DEQUANTIZE_LUT, lut_table(node, ins[0].dtype, constants))

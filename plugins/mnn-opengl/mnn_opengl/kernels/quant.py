"""The integer ops of dynamically quantized models: QuantizeLinear (quantize.comp, which also writes
logic.py's casts to 8 bits), ConvInteger (conv_int.comp) and MatMulInteger (matmul_int.comp), int8 or
uint8 data four to a word, exact int32 sums. What they decline and their parameters are
mnn_core.backend.kit.quant's, shared with the other GPU backends."""

from __future__ import annotations

from mnn_core.backend.kit import quant

from ..recorder import element
from . import register

ANY = ("float32", "int32", "int64", "uint8", "int8")


def _at(ref, fallback) -> int:
    return element(ref if ref is not None else fallback)


def _record_quantize(op, rec):
    ins, infos = quant.padded_inputs(op, 3)
    p = quant.quantize_params(infos, quant.full_attrs(op.node))
    x, y = ins[0], op.outputs[0]
    params = [y.info.size, 0, 0, p["signed"], p["inner"], p["channels"], p["has_zp"]]
    params += [element(x), element(ins[1]), _at(ins[2], x), element(y)]
    rec.elementwise("quantize", params, ins, [y], -(-y.info.size // 4))


def record_cast_to_bytes(op, rec) -> None:
    """A Cast of float32 (truncated) or int32 to int8 / uint8: the low byte, as C converts."""
    x, y = op.inputs[0], op.outputs[0]
    params = [y.info.size, 1, int(x.info.dtype == "int32"), 0, 1, 1, 0, element(x), element(x), element(x), element(y)]
    rec.elementwise("quantize", params, [x], [y], -(-y.info.size // 4))


def _record_conv_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    x, w, y = ins[0], ins[1], op.outputs[0]
    params = [y.info.size, *quant.conv_int_params(infos, quant.full_attrs(op.node))]
    params += [element(x), element(w), _at(ins[2], x), _at(ins[3], w), element(y)]
    rec.elementwise("conv_int", params, ins, [y], y.info.size)


def _record_matmul_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    a, b, y = ins[0], ins[1], op.outputs[0]
    params = [y.info.size, *quant.matmul_int_params(infos)]
    params += [element(a), element(b), _at(ins[2], a), _at(ins[3], b), element(y)]
    rec.elementwise("matmul_int", params, ins, [y], y.info.size)


register("QuantizeLinear", _record_quantize, quant.quantize_supports, dtypes=ANY, efficiency=0.5)
register("ConvInteger", _record_conv_int, quant.conv_int_supports, dtypes=quant.BYTES, efficiency=0.2)
register("MatMulInteger", _record_matmul_int, quant.matmul_int_supports, dtypes=quant.BYTES, efficiency=0.2)

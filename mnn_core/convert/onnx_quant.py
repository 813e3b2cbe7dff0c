"""The ONNX op table's QuantizeLinear / DequantizeLinear: the int8 ops where they take the dtype,
else ONNX's formula written with mnn elementwise ops (float8, int4, int16, ...)."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from .onnx_common import onnx_type_name
from .onnx_ops import _const, direct, handles


@handles("QuantizeLinear", "DequantizeLinear")
def _quantize(ctx, node):
    values = {}
    if node.attrs.get("output_dtype"):
        code = node.attrs["output_dtype"]
        values["output_dtype"] = onnx_type_name(code)
    try:
        direct(ctx, node, values=values, ignore=("output_dtype", "saturate", "precision"))
    except GraphError as exc:  # a dtype the int8 ops do not take (float8, int4, int16, ...): the formula
        if not _decomposed_quantize(ctx, node):
            raise exc


#: integer quantization targets beyond the int8 ops: their saturation range
_INT_RANGES = {
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int4": (-8, 7),
    "uint4": (0, 15),
    "int2": (-2, 1),
    "uint2": (0, 3),
    "int8": (-128, 127),
    "uint8": (0, 255),
}
_FLOAT_TARGETS = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn")


def _decomposed_quantize(ctx, node) -> bool:
    """Q/DQ to or from a low-precision or 16-bit type as mnn elementwise ops, ONNX's formula:
    QuantizeLinear y = saturate(x / scale + zero_point) (integers round half to even first),
    DequantizeLinear y = (x - zero_point) * scale."""
    quantize = node.op == "QuantizeLinear"
    x, scale_name, zp_name = node.inputs[0], node.inputs[1], node.input(2)
    if quantize:
        code = node.attrs.get("output_dtype")
        target = ctx.dtype(zp_name) if zp_name else onnx_type_name(code) if code else "uint8"
    else:
        code = node.attrs.get("output_dtype")
        target = onnx_type_name(code) if code else ctx.dtype(scale_name)
    narrow = target if quantize else ctx.dtype(x)
    if narrow not in _INT_RANGES and narrow not in _FLOAT_TARGETS:
        return False
    wide = ctx.dtype(x) if quantize else "float32"
    name = node.name

    def param(value: str, what: str) -> str | None:
        """The scale or zero point in `wide`, shaped to broadcast against x (None: cannot be)."""
        rank, axis, block = ctx.rank(x), node.attrs.get("axis", 1), node.attrs.get("block_size", 0)
        const = ctx.const(value)
        if const is not None:
            from ..ops import lowp

            shaped = _broadcastable(lowp.cast(const, "float32"), rank, axis, block, ctx.shape(x))
            return _const(ctx, shaped.astype(wide), f"{name}.{what}")
        if block:
            return None  # per-block parameters computed at run time: not taken
        v = (
            ctx.emit("Cast", [value], [ctx.fresh(f"{name}.{what}.wide")], {"to": wide})[0]
            if ctx.dtype(value) != wide
            else value
        )
        size = int(np.prod(ctx.shape(value), dtype=np.int64))
        if size == 1 or ctx.rank(value) == 0:
            return ctx.emit("Reshape", [v], [ctx.fresh(f"{name}.{what}.scalar")], {"shape": []})[0]
        per_axis = [-1 if i == axis % rank else 1 for i in range(rank)]
        return ctx.emit("Reshape", [v], [ctx.fresh(f"{name}.{what}.axis")], {"shape": per_axis})[0]

    s = param(scale_name, "scale")
    z = param(zp_name, "zero_point") if zp_name else None
    if s is None or zp_name and z is None:
        return False
    if quantize:
        y = ctx.emit("Div", [x, s], [ctx.fresh(f"{name}.div")])[0]
        if narrow in _INT_RANGES:
            y = ctx.emit("Round", [y], [ctx.fresh(f"{name}.round")])[0]
        if z is not None:
            y = ctx.emit("Add", [y, z], [ctx.fresh(f"{name}.shifted")])[0]
        if narrow in _INT_RANGES:
            lo, hi = _INT_RANGES[narrow]
            y = ctx.emit("Clip", [y], [ctx.fresh(f"{name}.clip")], {"min": float(lo), "max": float(hi)})[0]
        ctx.emit("Cast", [y], node.outputs, {"to": narrow, "saturate": int(node.attrs.get("saturate", 1))}, name)
        return True
    y = ctx.emit("Cast", [x], [ctx.fresh(f"{name}.wide")], {"to": "float32"})[0]
    if z is not None:
        y = ctx.emit("Sub", [y, z], [ctx.fresh(f"{name}.sub")])[0]
    y = ctx.emit("Mul", [y, s], [ctx.fresh(f"{name}.mul")])[0]
    if target == "float32":
        ctx.alias(node.outputs[0], y)
    else:
        ctx.emit("Cast", [y], node.outputs, {"to": target}, name)
    return True


def _broadcastable(p: np.ndarray, rank: int, axis: int, block: int, shape) -> np.ndarray:
    """A per-tensor, per-axis or per-block parameter shaped to broadcast against the data."""
    p = np.asarray(p)
    if p.size == 1 and not block:
        return p.reshape(())
    axis %= max(rank, 1)
    if block:
        return np.take(np.repeat(p, block, axis=axis), range(shape[axis]), axis=axis)
    return p.reshape([p.size if i == axis else 1 for i in range(rank)])

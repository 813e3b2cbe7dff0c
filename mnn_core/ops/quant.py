"""Quantized ops with ONNX semantics: QuantizeLinear, DequantizeLinear, QLinearMatMul,
QLinearConv, MatMulInteger and ConvInteger (int8/uint8 data, int32 accumulation).

Scales and zero points are per tensor (scalars), per axis (1-D along `axis`) or
per block (`block_size` > 0: one scale per block of that many elements along `axis`).

These kernels are the oracle of every int8 backend kernel, so their arithmetic is
pinned down to the bit (docs/QUANT.md, "Rounding rules"):

- QuantizeLinear of float32: `q = saturate(rint(float32(x / scale)) + zero_point)`,
  the division in float32, `rint` rounding halves to even.
- Integer products accumulate exactly (int32 in a kernel; here in float64, exact below 2**53).
- Requantization (QLinearConv, QLinearMatMul): `multiplier = float32(float32(x_scale * w_scale) / y_scale)`,
  `y = saturate(rint(float32(acc) * multiplier) + y_zero_point)`: acc converted to float32
  (rounding to nearest even), one float32 product, halves to even.
"""

from __future__ import annotations

import numpy as np

from ..backend.kit.geometry import conv_geometry
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import broadcast_shape, normalize_axis, rand
from .conv import CONV_ATTRS, conv2d_reference
from .schema import Attr, OpSchema, Sample, register

QUANT_DTYPES = ("uint8", "int8", "int32")
_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int32": (-(2**31), 2**31 - 1)}


def _per_axis(param: np.ndarray, x: np.ndarray, axis: int, block_size: int) -> np.ndarray:
    """A scale or zero point shaped to broadcast against x."""
    p = np.asarray(param)
    if p.size == 1 and block_size == 0:
        return p.reshape(())
    axis = normalize_axis(axis, x.ndim, "QuantizeLinear")
    if block_size:
        p = np.repeat(p, block_size, axis=axis)
        return np.take(p, range(x.shape[axis]), axis=axis)
    shape = [1] * x.ndim
    shape[axis] = p.size
    return p.reshape(shape)


def _quant_infer(ins, attrs):
    if len(ins) > 2 and ins[2] is not None:
        dtype = ins[2].dtype
    else:
        dtype = attrs["output_dtype"] or "uint8"
    if dtype not in QUANT_DTYPES:
        raise GraphError(f"QuantizeLinear: output dtype {dtype} is not one of {', '.join(QUANT_DTYPES)}")
    return [TensorInfo(ins[0].shape, dtype)]


def _quantize(ins, attrs):
    x, scale = ins[0], ins[1]
    zp = ins[2] if len(ins) > 2 and ins[2] is not None else None
    dtype = zp.dtype.name if zp is not None else (attrs["output_dtype"] or "uint8")
    s = _per_axis(scale, x, attrs["axis"], attrs["block_size"]).astype(np.float64)
    z = 0 if zp is None else _per_axis(zp, x, attrs["axis"], attrs["block_size"]).astype(np.float64)
    lo, hi = _RANGE[dtype]
    if x.dtype in (np.float32, np.float16):  # float32 division, as an int8 kernel does it (see the module doc)
        q = np.rint(x.astype(np.float32) / s.astype(np.float32)).astype(np.float64)
    else:
        q = np.rint(x.astype(np.float64) / s)
    y = q + z  # rint: halves to even, as ONNX says
    return [np.clip(y, lo, hi).astype(dtype)]


def _dequant_infer(ins, attrs):
    if ins[0].dtype not in QUANT_DTYPES:
        raise GraphError(f"DequantizeLinear takes {', '.join(QUANT_DTYPES)} input, got {ins[0].dtype}")
    return [TensorInfo(ins[0].shape, attrs["output_dtype"] or ins[1].dtype)]


def _dequantize(ins, attrs):
    x, scale = ins[0], ins[1]
    zp = ins[2] if len(ins) > 2 and ins[2] is not None else None
    s = _per_axis(scale, x, attrs["axis"], attrs["block_size"]).astype(np.float64)
    z = 0 if zp is None else _per_axis(zp, x, attrs["axis"], attrs["block_size"]).astype(np.float64)
    return [((x.astype(np.float64) - z) * s).astype(attrs["output_dtype"] or scale.dtype)]


_AXIS_ATTRS = {
    "axis": Attr("int", 1),
    "block_size": Attr("int", 0),
    "output_dtype": Attr(
        "str",
        "",
        ("",) + QUANT_DTYPES + ("float32", "float16"),
        "empty: from the zero point (uint8 without one) / the scale",
    ),
}


def _quant_samples(rng):
    yield Sample([rand(rng, 2, 3, 4, low=-3, high=3), np.float32(0.02), np.uint8(128)])
    yield Sample(
        [
            rand(rng, 4, 5, low=-3, high=3),
            np.array([0.05, 0.1, 0.02, 0.03], np.float32),
            np.array([0, 3, -2, 1], np.int8),
        ],
        {"axis": 0},
    )
    # an odd size (words only partly filled), saturation at both ends, no zero point (uint8)
    yield Sample([rand(rng, 3, 5, 7, low=-4, high=4), np.float32(0.015), np.uint8(100)], label="odd size, saturating")
    yield Sample([rand(rng, 7, low=-1, high=3), np.float32(0.01)], label="no zero point")
    yield Sample(
        [rand(rng, 2, 3, 5, low=-2, high=2), np.array([0.01, 0.02, 0.005], np.float32), np.array([-3, 0, 5], np.int8)],
        {"axis": 1},
        "int8 per channel, axis 1",
    )
    halves = np.array([0.25, 0.75, -0.25, -0.75, 1.25, 0.0, 63.75], np.float32)  # x / 0.5 = k + 0.5: ties
    yield Sample([halves, np.float32(0.5), np.uint8(2)], label="ties to even")


def _dequant_samples(rng):
    yield Sample([rng.integers(0, 255, (2, 3, 4)).astype(np.uint8), np.float32(0.02), np.uint8(128)])
    yield Sample([rng.integers(-128, 127, (3, 4)).astype(np.int8), np.array([0.5, 0.1, 0.2], np.float32)], {"axis": 0})
    yield Sample([rng.integers(-1000, 1000, (5,)).astype(np.int32), np.float32(0.001)])


register(
    OpSchema(
        "QuantizeLinear",
        infer=_quant_infer,
        reference=_quantize,
        attrs=dict(_AXIS_ATTRS),
        n_inputs=(2, 3),
        samples=_quant_samples,
        doc="y = saturate(round(x / scale) + zero_point), per tensor, axis or block.",
    )
)
register(
    OpSchema(
        "DequantizeLinear",
        infer=_dequant_infer,
        reference=_dequantize,
        attrs=dict(_AXIS_ATTRS),
        n_inputs=(2, 3),
        samples=_dequant_samples,
        doc="y = (x - zero_point) * scale, per tensor, axis or block.",
    )
)


# -- integer matrix products and convolutions ---------------------------------------------------------


def _zp(ins, i) -> np.ndarray:
    return ins[i].astype(np.int64) if len(ins) > i and ins[i] is not None else np.int64(0)


def _matmul_shape(a, b, op):
    try:
        return np.matmul(np.empty(a, np.int8), np.empty(b, np.int8)).shape
    except ValueError:
        raise GraphError(f"{op}: shapes {a} and {b} do not multiply") from None


def _matmul_integer_infer(ins, attrs):
    return [TensorInfo(_matmul_shape(ins[0].shape, ins[1].shape, "MatMulInteger"), "int32")]


def _b_zero_point(zp, b):
    """A per-column zero point of B [K, N] broadcasts along the rows."""
    return zp if np.ndim(zp) == 0 or b.ndim < 2 else np.asarray(zp).reshape(np.asarray(zp).shape[:-1] + (1, -1))


def _matmul_integer(ins, attrs):
    za, zb = _zp(ins, 2), _zp(ins, 3)
    a = ins[0].astype(np.int64) - (za.reshape(-1, 1) if za.size > 1 else za)  # A may have one per row
    b = ins[1].astype(np.int64) - _b_zero_point(zb, ins[1])
    return [np.matmul(a, b).astype(np.int32)]


register(
    OpSchema(
        "MatMulInteger",
        infer=_matmul_integer_infer,
        reference=_matmul_integer,
        n_inputs=(2, 4),
        doc="(A - a_zero_point) @ (B - b_zero_point) in int32.",
        samples=lambda rng: iter(
            [
                Sample(
                    [
                        rng.integers(0, 255, (4, 3)).astype(np.uint8),
                        rng.integers(0, 255, (3, 2)).astype(np.uint8),
                        np.uint8(12),
                        np.uint8(0),
                    ]
                ),
                Sample(
                    [
                        rng.integers(-128, 127, (2, 4, 3)).astype(np.int8),
                        rng.integers(-128, 127, (3, 5)).astype(np.int8),
                    ]
                ),
                Sample(
                    [
                        rng.integers(0, 255, (2, 3, 5)).astype(np.uint8),
                        rng.integers(0, 255, (2, 5, 7)).astype(np.uint8),
                        np.uint8(131),
                        np.uint8(77),
                    ],
                    label="batched B, odd sizes",
                ),
                Sample(
                    [
                        rng.integers(0, 255, (5, 9)).astype(np.uint8),
                        rng.integers(-128, 127, (9, 3)).astype(np.int8),
                        np.uint8(200),
                        np.int8(-7),
                    ],
                    label="uint8 A, int8 B",
                ),
            ]
        ),
    )
)


def _qlinear_matmul_infer(ins, attrs):
    return [TensorInfo(_matmul_shape(ins[0].shape, ins[3].shape, "QLinearMatMul"), ins[7].dtype)]


def requant_multiplier(x_scale, w_scale, y_scale) -> np.ndarray:
    """float32(float32(x_scale * w_scale) / y_scale): the one float32 factor per output channel."""
    xw = np.float32(x_scale) * np.asarray(w_scale, np.float32)
    return (xw / np.float32(y_scale)).astype(np.float32)


def requantize(acc: np.ndarray, multiplier: np.ndarray, y_zp) -> np.ndarray:
    """Exact integer accumulators to y's dtype: saturate(rint(float32(acc) * multiplier) + y_zero_point)."""
    y_zp = np.asarray(y_zp)
    lo, hi = _RANGE[y_zp.dtype.name]
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.rint(np.asarray(acc).astype(np.float32) * np.asarray(multiplier, np.float32))
    y = np.nan_to_num(y.astype(np.float64), nan=0.0) + y_zp.astype(np.float64)
    return np.clip(y, lo, hi).astype(y_zp.dtype)


def _qlinear_matmul(ins, attrs):
    a, sa, za, b, sb, zb, sy, zy = ins
    acc = np.matmul(
        a.astype(np.float64) - za.astype(np.float64), b.astype(np.float64) - _b_zero_point(zb.astype(np.float64), b)
    )
    mult = requant_multiplier(sa, sb if sb.ndim == 0 or b.ndim < 2 else sb.reshape(1, -1), sy)
    return [requantize(acc, mult, zy)]


register(
    OpSchema(
        "QLinearMatMul",
        infer=_qlinear_matmul_infer,
        reference=_qlinear_matmul,
        n_inputs=(8, 8),
        doc="Quantized matrix product: dequantize A and B, multiply, requantize to y_scale/y_zero_point.",
        samples=lambda rng: iter(
            [
                Sample(
                    [
                        rng.integers(0, 255, (2, 4)).astype(np.uint8),
                        np.float32(0.02),
                        np.uint8(113),
                        rng.integers(0, 255, (4, 3)).astype(np.uint8),
                        np.float32(0.01),
                        np.uint8(114),
                        np.float32(0.05),
                        np.uint8(118),
                    ]
                )
            ]
        ),
    )
)


def _conv_int_infer(ins, attrs):
    geo = conv_geometry(ins[0].shape, ins[1].shape, attrs)
    return [TensorInfo(geo["out"], "int32")]


def _w_zp(zp, w):
    zp = np.asarray(zp, np.float64)
    return zp if zp.ndim == 0 or zp.size == 1 else zp.reshape(-1, 1, 1, 1)


def _conv_integer(ins, attrs):
    x, w = ins[0].astype(np.float64) - _zp(ins, 2), ins[1].astype(np.float64) - _w_zp(_zp(ins, 3), ins[1])
    geo = conv_geometry(x.shape, w.shape, attrs)
    # padding must pad with the zero point, i.e. zero after the subtraction above
    return [_wrap_int32(conv2d_reference(x, w, None, geo))]


def _wrap_int32(exact: np.ndarray) -> np.ndarray:
    """Exact integer sums (float64, exact below 2**53) as int32 accumulators hold them: modulo 2**32."""
    return np.rint(exact).astype(np.int64).astype(np.int32)


_CONV_INT_ATTRS = {k: v for k, v in CONV_ATTRS.items() if not k.startswith("act")}

register(
    OpSchema(
        "ConvInteger",
        infer=_conv_int_infer,
        reference=_conv_integer,
        attrs=dict(_CONV_INT_ATTRS),
        n_inputs=(2, 4),
        doc="Integer convolution of (x - x_zero_point) and (w - w_zero_point), int32 output.",
        samples=lambda rng: iter(
            [
                Sample(
                    [
                        rng.integers(0, 255, (1, 2, 5, 5)).astype(np.uint8),
                        rng.integers(0, 255, (3, 2, 3, 3)).astype(np.uint8),
                        np.uint8(10),
                    ],
                    {"pads": [1, 1, 1, 1]},
                ),
                Sample(
                    [
                        rng.integers(-128, 127, (2, 4, 7, 9)).astype(np.int8),
                        rng.integers(-128, 127, (6, 2, 3, 2)).astype(np.int8),
                        np.int8(-5),
                        np.int8(3),
                    ],
                    {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "group": 2},
                    "int8, groups, strides, dilations, odd sizes",
                ),
                Sample(
                    [
                        rng.integers(0, 255, (1, 3, 5, 6)).astype(np.uint8),
                        rng.integers(0, 255, (5, 3, 1, 1)).astype(np.uint8),
                    ],
                    {},
                    "1x1 without zero points",
                ),
            ]
        ),
    )
)


def _qlinear_conv_infer(ins, attrs):
    geo = conv_geometry(ins[0].shape, ins[3].shape, attrs)
    return [TensorInfo(geo["out"], ins[7].dtype)]


def _qlinear_conv(ins, attrs):
    x, sx, zx, w, sw, zw, sy, zy = ins[:8]
    bias = ins[8] if len(ins) > 8 and ins[8] is not None else None
    acc = _conv_integer([x, w, zx, zw], attrs)[0]
    if bias is not None:  # int32 + int32 wraps, as in ONNX Runtime and the compiled kernels
        acc = (acc.astype(np.int64) + bias.astype(np.int64).reshape((1, -1) + (1,) * (acc.ndim - 2))).astype(np.int32)
    mult = requant_multiplier(sx, sw.reshape(1, -1, 1, 1) if sw.size > 1 else sw.reshape(()), sy)
    return [requantize(acc, mult, zy)]


register(
    OpSchema(
        "QLinearConv",
        infer=_qlinear_conv_infer,
        reference=_qlinear_conv,
        attrs=dict(_CONV_INT_ATTRS),
        n_inputs=(8, 9),
        doc="Quantized convolution: int32 accumulation (plus int32 bias), requantized to y_scale/y_zero_point.",
        samples=lambda rng: iter(
            [
                Sample(
                    [
                        rng.integers(0, 255, (1, 2, 5, 5)).astype(np.uint8),
                        np.float32(0.02),
                        np.uint8(100),
                        rng.integers(0, 255, (3, 2, 3, 3)).astype(np.uint8),
                        np.array([0.01, 0.02, 0.015], np.float32),
                        np.array([110, 120, 130], np.uint8),
                        np.float32(0.1),
                        np.uint8(90),
                        rng.integers(-50, 50, (3,)).astype(np.int32),
                    ],
                    {"pads": [1, 1, 1, 1]},
                )
            ]
        ),
    )
)


# -- QLinearAdd (ONNX Runtime's com.microsoft contrib op) --------------------------------------------


def _qlinear_add_infer(ins, attrs):
    a, b, zc = ins[0], ins[3], ins[7]
    for i, what in (
        (1, "A_scale"),
        (2, "A_zero_point"),
        (4, "B_scale"),
        (5, "B_zero_point"),
        (6, "C_scale"),
        (7, "C_zero_point"),
    ):
        if ins[i].shape not in ((), (1,)):
            raise GraphError(
                f"QLinearAdd: {what} must be a scalar (per-tensor quantization), got shape "
                f"{ins[i].shape}; per-channel adds stay DequantizeLinear + Add + QuantizeLinear"
            )
    if a.dtype not in ("uint8", "int8") or b.dtype != a.dtype or zc.dtype != a.dtype:
        raise GraphError(
            f"QLinearAdd: A, B and C_zero_point must share one of uint8/int8, got {a.dtype}, {b.dtype}, {zc.dtype}"
        )
    return [TensorInfo(broadcast_shape(a.shape, b.shape), a.dtype)]


def add_multipliers(a_scale, b_scale, c_scale) -> tuple[np.float32, np.float32]:
    """float32(A_scale / C_scale) and float32(B_scale / C_scale): one float32 division each."""
    sc = np.float32(np.asarray(c_scale).reshape(()))
    return (
        np.float32(np.float32(np.asarray(a_scale).reshape(())) / sc),
        np.float32(np.float32(np.asarray(b_scale).reshape(())) / sc),
    )


def _qlinear_add(ins, attrs):
    a, sa, za, b, sb, zb, sc, zc = ins
    ma, mb = add_multipliers(sa, sb, sc)
    # a - za has at most 9 bits, exact in float32; each product and the sum are one float32 rounding
    va = (a.astype(np.int32) - np.int32(za.reshape(()))).astype(np.float32) * ma
    vb = (b.astype(np.int32) - np.int32(zb.reshape(()))).astype(np.float32) * mb
    y = np.rint(va + vb).astype(np.float64) + float(zc.reshape(()))  # rint: halves to even
    lo, hi = _RANGE[zc.dtype.name]
    return [np.clip(y, lo, hi).astype(zc.dtype)]


def _qlinear_add_samples(rng):
    yield Sample(
        [
            rng.integers(0, 255, (2, 3, 5)).astype(np.uint8),
            np.float32(0.02),
            np.uint8(120),
            rng.integers(0, 255, (2, 3, 5)).astype(np.uint8),
            np.float32(0.035),
            np.uint8(97),
            np.float32(0.05),
            np.uint8(128),
        ]
    )
    yield Sample(
        [
            rng.integers(0, 255, (1, 4, 3, 3)).astype(np.uint8),
            np.float32(0.1),
            np.uint8(0),
            rng.integers(0, 255, (4, 1, 1)).astype(np.uint8),
            np.float32(0.07),
            np.uint8(10),
            np.float32(0.12),
            np.uint8(0),
        ]
    )


register(
    OpSchema(
        "QLinearAdd",
        infer=_qlinear_add_infer,
        reference=_qlinear_add,
        n_inputs=(8, 8),
        samples=_qlinear_add_samples,
        doc="Quantized add (ONNX Runtime's com.microsoft QLinearAdd): A and B dequantized, added and requantized "
        "to C_scale/C_zero_point with numpy broadcasting; a folded Relu is C_zero_point = 0 (saturation).",
    )
)

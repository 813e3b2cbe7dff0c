"""QLinearConv on x86 with int8 kernels (csrc/int8.h): uint8 activations, int8 weights with per-channel
or per-tensor scales and zero point 0, int32 bias, uint8 output; bit-exact to the reference
(docs/QUANT.md, "Rounding rules"). A 1x1 convolution of 1x1 planes (mnn's int8 fully connected layer)
runs as one GEMM over the batch.

Paths (csrc/int8.h): where the CPU has AVX-512 VNNI, uint8 x int8 `_mm512_dpbusd_epi32` on the raw
activations with the zero point taken out of the bias once at prepare time, reading the padded input's
phase planes directly (no im2col; "u8", "dw_vnni" for depthwise, "fc_vnni" for the fully connected form);
elsewhere the exact int16-pair `madd` GEMM ("pairs") and an int32 depthwise kernel ("depthwise").
QuantizeLinear / DequantizeLinear (per tensor, float32 <-> uint8), QLinearAdd (equal shapes) and MaxPool on
uint8 run here too, so
that an int8 graph does not fall back to the reference backend between its layers."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.geometry import conv_geometry, pool_geometry
from mnn_core.ops.quant import requant_multiplier

from . import _x86
from ._common import KERNELS, KernelSpec, conv_params, kernel, pool_params, register, static_shape

#: take the VNNI GEMM where the ISA has it (tests turn it off to check the int16-pair path on avx512)
USE_VNNI = True
#: the VNNI convolution's planes: -1 as _x86.qconv estimates cheaper, 1 one per kernel column (no thrown-away
#: columns), 0 the stride's column phases (tests force each)
SHIFTED = -1
#: group-1 VNNI convolutions: -1 conv_px or conv_c4 as _x86.qconv estimates cheaper, 1 always conv_px, 0 never
PX = -1

_PARAMS = (1, 2, 4, 5, 6, 7, 8)  # every input but x and w: constants


def _supports(node, ins):
    x, w = ins[0], ins[3]
    if x.dtype != "uint8" or w.dtype != "int8" or ins[7].dtype != "uint8":
        return "int8 kernels take uint8 activations and int8 weights (zero point 0)"
    if len(x.shape) != 4 or len(w.shape) != 4:
        return "only 2-D convolution"
    if len(ins) > 8 and ins[8] is not None and ins[8].dtype != "int32":
        return "bias must be int32"
    if any(ins[i] is not None and int(np.prod(ins[i].shape)) != 1 for i in (1, 2, 6, 7)):
        return "per-axis x/y scales or zero points (only per-tensor ones)"
    return True


@kernel("QLinearConv", dtypes=("uint8", "int8", "int32", "float32"), supports=_supports, efficiency=0.5)
def prepare_qconv(node, ins, outs, constants, ctx, isa):
    names = node.inputs
    need = [names[i] for i in _PARAMS if i < len(names) and names[i]]
    missing = [n for n in need + [names[3]] if n not in constants]
    if missing:
        raise ValueError(f"x86 QLinearConv needs constant weights, scales and zero points; {missing} are computed")
    sx, zx = constants[names[1]], constants[names[2]]
    w, sw, zw = constants[names[3]], constants[names[4]], constants[names[5]]
    sy, zy = constants[names[6]], constants[names[7]]
    if np.size(sx) != 1 or np.size(zx) != 1 or np.size(sy) != 1 or np.size(zy) != 1 or np.any(zw != 0):
        raise ValueError("x86 QLinearConv takes per-tensor x/y scales and zero points and weight zero point 0")
    x_shape = static_shape(ins[0])
    geo = conv_geometry(x_shape, w.shape, node.attrs)
    o = w.shape[0]
    mult = np.broadcast_to(
        requant_multiplier(
            np.float32(sx.reshape(())), np.asarray(sw, np.float32).reshape(-1), np.float32(sy.reshape(()))
        ),
        (o,),
    )
    bias = constants[names[8]] if len(names) > 8 and names[8] else None
    n, c, h, wd = x_shape
    kh, kw = w.shape[2:]
    fc = int(h == 1 and wd == 1 and kh == 1 and kw == 1 and geo["group"] == 1 and tuple(geo["out"][2:]) == (1, 1))
    p = dict(conv_params(x_shape, w.shape, geo), fc=fc)
    depthwise = geo["group"] == c == o and w.shape[1] == 1 and not fc
    vnni = USE_VNNI and _x86.int8_vnni(isa) and geo["strides"][0] * geo["strides"][1] <= 64
    if depthwise:
        path = "dw_vnni" if vnni else "depthwise"
    else:
        path = ("fc_vnni" if fc else "u8") if vnni else "pairs"
    return _x86.qconv(
        isa,
        ctx.threads,
        p,
        w,
        bias,
        np.ascontiguousarray(mult, np.float32),
        int(zx.reshape(())),
        int(zy.reshape(())),
        path,
        SHIFTED,
        PX,
    )


def _qdq_supports(node, ins):
    if len(ins) < 2 or ins[1] is None or len(ins[1].shape) != 0 and int(np.prod(ins[1].shape)) != 1:
        return "only per-tensor scales"
    zp = ins[2] if len(ins) > 2 else None
    if ins[1].dtype != "float32" or zp is not None and (zp.dtype != "uint8" or int(np.prod(zp.shape)) != 1):
        return "a float32 scale and a uint8 zero point, per tensor"
    quantize = node.op == "QuantizeLinear"
    if quantize and (ins[0].dtype != "float32" or (zp is not None and zp.dtype != "uint8")):
        return "QuantizeLinear: float32 -> uint8 only"
    if not quantize and (ins[0].dtype != "uint8" or ins[1].dtype != "float32"):
        return "DequantizeLinear: uint8 -> float32 only"
    if node.attrs.get("output_dtype") not in (None, "", "uint8" if quantize else "float32"):
        return "output dtype must be uint8 (quantize) / float32 (dequantize)"
    if node.attrs.get("block_size", 0):
        return "no blocked quantization"
    return True


def _prepare_qdq(node, ins, outs, constants, ctx, isa):
    # the scale and zero point are read at run time (constant or computed); _qdq_supports checked their shapes
    return _x86.qelt(isa, ctx.threads, node.op, 0.0, 0)


register(
    KernelSpec("QuantizeLinear", dtypes=("float32", "uint8"), supports=_qdq_supports, efficiency=0.3), _prepare_qdq
)
register(
    KernelSpec("DequantizeLinear", dtypes=("float32", "uint8"), supports=_qdq_supports, efficiency=0.3), _prepare_qdq
)


def _qadd_supports(node, ins):
    a, b = ins[0], ins[3]
    if a.dtype != "uint8" or b.dtype != "uint8" or ins[7].dtype != "uint8":
        return "QLinearAdd: uint8 only"
    if tuple(a.shape) != tuple(b.shape):
        return "QLinearAdd: A and B of one shape (broadcasting runs on the reference backend)"
    if any(ins[i].dtype != "float32" for i in (1, 4, 6)) or any(ins[i].dtype != "uint8" for i in (2, 5)):
        return "QLinearAdd: float32 scales and uint8 zero points"
    if any(int(np.prod(ins[i].shape)) != 1 for i in (1, 2, 4, 5, 6, 7)):
        return "QLinearAdd: per-tensor scales and zero points"
    return True


def _prepare_qadd(node, ins, outs, constants, ctx, isa):
    # scales and zero points are read at run time (constant or computed); _qadd_supports checked their shapes
    return _x86.qadd(isa, ctx.threads)


register(KernelSpec("QLinearAdd", dtypes=("float32", "uint8"), supports=_qadd_supports, efficiency=0.5), _prepare_qadd)


def _wrap_maxpool():
    """MaxPool: the float kernel as before, plus uint8 planes (an int8 graph's pooling)."""
    float_kernel = KERNELS["MaxPool"]

    def supports(node, ins):
        if ins[0].dtype == "uint8":
            if len(ins[0].shape) != 4:
                return "only NCHW (4-D) input"
            return True if len(node.outputs) < 2 or not node.outputs[1] else "no Indices output on uint8"
        return float_kernel.spec.accepts(node, ins)

    def prepare(node, ins, outs, constants, ctx, isa):
        if ins[0].dtype != "uint8":
            return float_kernel.impl(node, ins, outs, constants, ctx, isa)
        x = static_shape(ins[0])
        geo = pool_geometry(x, node.attrs, node.op)
        p = pool_params(x, geo)
        return _x86.qmaxpool(isa, ctx.threads, x[0] * x[1], p, USE_VNNI)

    spec = float_kernel.spec
    register(
        KernelSpec(
            "MaxPool",
            dtypes=tuple(spec.dtypes) + ("uint8",),
            layouts=spec.layouts,
            supports=supports,
            efficiency=spec.efficiency,
        ),
        prepare,
    )


if "MaxPool" in KERNELS and "uint8" not in KERNELS["MaxPool"].spec.dtypes:
    _wrap_maxpool()

"""QLinearConv on x86 with int8 kernels (csrc/int8.h): uint8 activations, int8 weights with per-channel
or per-tensor scales and zero point 0, int32 bias, uint8 output; bit-exact to the reference
(docs/QUANT.md, "Rounding rules"). A 1x1 convolution of 1x1 planes (mnn's int8 fully connected layer)
runs as one GEMM over the batch."""

from __future__ import annotations

import numpy as np

from mnn_core.ops.conv import conv_geometry
from mnn_core.ops.quant import requant_multiplier

from . import _x86
from ._common import kernel, static_shape

_PARAMS = (1, 2, 4, 5, 6, 7, 8)  # every input but x and w: constants


def _supports(node, ins):
    x, w = ins[0], ins[3]
    if x.dtype != "uint8" or w.dtype != "int8" or ins[7].dtype != "uint8":
        return "int8 kernels take uint8 activations and int8 weights (zero point 0)"
    if len(x.shape) != 4 or len(w.shape) != 4:
        return "only 2-D convolution"
    if len(ins) > 8 and ins[8] is not None and ins[8].dtype != "int32":
        return "bias must be int32"
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
    mult = np.broadcast_to(requant_multiplier(np.float32(sx.reshape(())), np.asarray(sw, np.float32).reshape(-1),
                                              np.float32(sy.reshape(()))), (o,))
    bias = constants[names[8]] if len(names) > 8 and names[8] else None
    n, c, h, wd = x_shape
    kh, kw = w.shape[2:]
    fc = int(h == 1 and wd == 1 and kh == 1 and kw == 1 and geo["group"] == 1 and tuple(geo["out"][2:]) == (1, 1))
    p = dict(N=n, O=o, group=geo["group"], fc=fc, C=w.shape[1], H=h, W=wd, OH=geo["out"][2], OW=geo["out"][3],
             kh=kh, kw=kw, sh=geo["strides"][0], sw=geo["strides"][1], dh=geo["dilations"][0],
             dw=geo["dilations"][1], pt=geo["pads"][0], pl=geo["pads"][1])
    return _x86.qconv(isa, ctx.threads, p, w, bias, np.ascontiguousarray(mult, np.float32), int(zx.reshape(())),
                      int(zy.reshape(())))

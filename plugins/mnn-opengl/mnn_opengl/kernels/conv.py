"""2-D convolution (conv2d.comp): 1x1, 3x3, depthwise and the general case
(stride, padding, dilation, group) in one shader, with bias and the fused
activation. OUT_C output channels per invocation: 4 where groups have at
least 4 channels, else 1 (depthwise)."""

from __future__ import annotations

from mnn_core.ops.conv import conv_geometry

from ..recorder import element
from . import activation, register


def _supports(node, ins):
    if len(ins[0].shape) != 4:
        return f"2-D convolution only (NCHW input), got rank {len(ins[0].shape)}"
    return True


def _record(op, rec):
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    geo = conv_geometry(x.info.shape, w.info.shape, op.node.attrs)
    n, c, h, wd = x.info.shape
    _, o, oh, ow = geo["out"]
    g = geo["group"]
    out_c = 4 if o // g >= 4 else 1
    out_x = 4 if ow >= 4 else 1
    blocks = -(-(o // g) // out_c)
    total = n * g * blocks * oh * -(-ow // out_x)
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    params = [
        n,
        c,
        h,
        wd,
        o,
        oh,
        ow,
        kh,
        kw,
        sh,
        sw,
        geo["pads"][0],
        geo["pads"][1],
        dh,
        dw,
        g,
        element(x),
        element(w),
        element(bias) if bias is not None else -1,
        element(y),
        activation(op.node.attrs),
    ]
    rec.elementwise("conv2d", params, [x, w, bias], [y], total, defines=(("OUT_C", out_c), ("OUT_X", out_x)))


register("Conv", _record, _supports, efficiency=0.4)

"""Conv on x86: depthwise kernel, or im2col into packed panels + packed GEMM.

Every geometry the schema allows runs here: groups, strides, dilations, pads,
auto_pad, bias and every fused activation (applied in the GEMM epilogue).
Constant weights are packed once at prepare into the ISA's MR-row panels;
weights computed by the graph are packed at each run.
"""

from __future__ import annotations

from mnn_core.ops.conv import conv_geometry

from . import _x86
from ._common import fused_activation, kernel, static_shape


def _supports(node, ins):
    if len(ins[0].shape) != 4 or len(ins[1].shape) != 4:
        return "only 2-D convolution (NCHW input, OIHW weight)"
    return True


@kernel("Conv", supports=_supports, efficiency=0.6)
def prepare_conv(node, ins, outs, constants, ctx, isa):
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x_shape, w_shape, node.attrs)
    n, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    group = geo["group"]
    act, act_alpha, act_beta = fused_activation(node.attrs)
    depthwise = group == c and o == c  # one filter per channel
    p = dict(N=n, O=o, group=group, depthwise=int(depthwise), C=c if depthwise else cg, H=h, W=w,
             OH=geo["out"][2], OW=geo["out"][3], kh=kh, kw=kw, sh=geo["strides"][0], sw=geo["strides"][1],
             dh=geo["dilations"][0], dw=geo["dilations"][1], pt=geo["pads"][0], pl=geo["pads"][1],
             act=act, act_alpha=act_alpha, act_beta=act_beta)
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    weight = constants.get(node.inputs[1])
    bias = constants.get(node.inputs[2]) if has_bias else None
    return _x86.conv(isa, ctx.threads, p, weight, bias, 1, 2 if has_bias else -1)

"""ConvTranspose on Arm (csrc/deconv.c), 1-D and 2-D, float32: the float path's packed GEMM
(W_g^T X_g per group, constant weights packed at prepare; fp16 arithmetic under precision="low") then
col2im in fp32; geometry (auto_pad,
output_shape, output_padding) from the core's conv_transpose_geometry."""

from __future__ import annotations

from mnn_core.backend.kit.geometry import conv_transpose_geometry

from . import _arm, paths
from ._common import fused_activation, kernel, static_shape


def _supports(node, ins):
    if len(ins[0].shape) not in (3, 4):
        return "only 1-D and 2-D ConvTranspose (NCL / NCHW input)"
    return True


@kernel("ConvTranspose", supports=_supports, efficiency=0.6)
def prepare_deconv(node, ins, outs, constants, ctx):
    weight = constants.get(node.inputs[1])
    if weight is None:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError("arm ConvTranspose needs constant weights (packed once, at prepare)")
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    bias = constants.get(node.inputs[2]) if has_bias else None
    if has_bias and bias is None:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError("arm ConvTranspose needs a constant bias")
    x, w = static_shape(ins[0]), tuple(weight.shape)
    one_d = len(x) == 3
    geo = conv_transpose_geometry(x, w, node.attrs, (1,) if one_d else (2,))
    x4 = (x[0], x[1], 1, x[2]) if one_d else x
    out = geo["out"]
    k = ([1] + geo["kernel"]) if one_d else geo["kernel"]
    st = ([1] + geo["strides"]) if one_d else geo["strides"]
    dil = ([1] + geo["dilations"]) if one_d else geo["dilations"]
    pads = geo["pads"]
    pt, pl = (0, pads[0]) if one_d else (pads[0], pads[1])
    act, act_alpha, act_beta = fused_activation(node.attrs)
    p = dict(
        N=x4[0],
        C=x4[1],
        H=x4[2],
        W=x4[3],
        O=out[1],
        OH=1 if one_d else out[2],
        OW=out[-1],
        group=geo["group"],
        kh=k[0],
        kw=k[1],
        sh=st[0],
        sw=st[1],
        dh=dil[0],
        dw=dil[1],
        pt=pt,
        pl=pl,
        act=act,
        act_alpha=act_alpha,
        act_beta=act_beta,
    )
    # precision="low": the GEMM (nearly all the work) in fp16 arithmetic on the fp16 path; col2im sums in fp32
    return _arm.deconv(p, weight, bias, paths.float_path(ctx.precision, ctx.options))

"""2-D convolution (grouped, strided, dilated, padded) with a fused activation."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand, resolve_pads
from .elementwise import ACTIVATIONS, apply_activation
from .schema import Attr, OpSchema, Sample, register

#: attributes every op that can carry a fused activation has
FUSED_ACTIVATION_ATTRS = {
    "activation": Attr("str", "none", ACTIVATIONS, "activation applied to the output"),
    "act_alpha": Attr("float", 0.0, doc="first activation parameter (clip min, leaky slope, ...)"),
    "act_beta": Attr("float", 0.0, doc="second activation parameter (clip max, ...)"),
}

CONV_ATTRS = {
    "kernel_shape": Attr("ints", [], doc="taken from the weight when empty"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="[top, left, bottom, right]; default 0"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
    "group": Attr("int", 1),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
    **FUSED_ACTIVATION_ATTRS,
}


def conv_geometry(x_shape, w_shape, attrs):
    """Resolve kernel, strides, dilations and explicit pads; return them and the output size."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise GraphError(f"Conv takes NCHW input and OIHW weight (4-D), got {x_shape} and {w_shape}")
    n, c, h, w = x_shape
    o, ci, kh, kw = w_shape
    group = attrs["group"]
    if group < 1 or c != ci * group or o % group:
        raise GraphError(f"Conv: input has {c} channels but weight {w_shape} with group={group} needs {ci * group}")
    kernel = attrs["kernel_shape"] or [kh, kw]
    if list(kernel) != [kh, kw]:
        raise GraphError(f"Conv: kernel_shape {kernel} disagrees with the weight {w_shape}")
    strides = attrs["strides"] or [1, 1]
    dil = attrs["dilations"] or [1, 1]
    if min(strides) < 1 or min(dil) < 1:
        raise GraphError("Conv: strides and dilations must be at least 1")
    eff = [(kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1]
    pads = resolve_pads("Conv", attrs, (h, w), strides, eff)
    oh = (h + pads[0] + pads[2] - eff[0]) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - eff[1]) // strides[1] + 1
    if oh < 1 or ow < 1:
        raise GraphError(f"Conv: kernel {eff} does not fit input {h}x{w} with pads {pads}")
    return dict(kernel=[kh, kw], strides=strides, dilations=dil, pads=pads, out=(n, o, oh, ow), group=group)


def _conv_infer(ins, attrs):
    x, wt, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    geo = conv_geometry(x.shape, wt.shape, attrs)
    if b is not None and b.shape != (wt.shape[0],):
        raise GraphError(f"Conv: bias must have shape ({wt.shape[0]},), got {b.shape}")
    return [TensorInfo(geo["out"], x.dtype)]


def conv2d_reference(x, w, b, geo):
    """Direct convolution in float64: the windows gathered tap by tap, then one einsum over all groups."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    g = geo["group"]
    (pt, pl, pb, pr), (sh, sw), (dh, dw) = geo["pads"], geo["strides"], geo["dilations"]
    kh, kw = geo["kernel"]
    oh, ow = geo["out"][2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    # windows (n, c, kh, kw, oh, ow), one strided slice copy per tap: a reshape or astype of a 7-D
    # sliding-window view instead is an element-by-element copy (seconds for one depthwise layer of a batch)
    cols = np.empty((n, c, kh, kw, oh, ow), np.float64)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, rows, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
    cg, og = c // g, o // g
    xs = cols.reshape(n, g, cg, kh, kw, oh, ow)
    ws = w.reshape(g, og, cg, kh, kw).astype(np.float64)
    # depthwise (one channel in, one out per group) is a multiply-add over the taps: einsum's own loop is
    # faster there than the batched GEMM that optimize=True transposes into
    out = np.einsum("ngcklhw,gockl->ngohw", xs, ws, optimize=not (cg == 1 and og == 1)).reshape(geo["out"])
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out.astype(x.dtype)


def _conv_reference(ins, attrs):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    geo = conv_geometry(x.shape, w.shape, attrs)
    y = conv2d_reference(x, w, b, geo)
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _conv_flops(ins, outs, attrs):
    o = outs[0]
    w = ins[1]
    return 2.0 * o.size * w.shape[1] * w.shape[2] * w.shape[3]


def _conv_samples(rng):
    # (N, C, H, W), (O, K), attrs
    cases = [
        ((1, 3, 8, 8), (4, 3), {"pads": [1, 1, 1, 1]}),
        ((2, 5, 7, 9), (6, 1), {}),
        ((1, 8, 11, 11), (8, 3), {"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ((1, 4, 10, 10), (6, 3), {"group": 2, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
        ((3, 3, 9, 7), (5, 5), {"strides": [2, 1], "pads": [2, 1, 1, 2], "activation": "relu"}),
        ((1, 16, 6, 6), (16, 3), {"auto_pad": "SAME_UPPER", "activation": "clip", "act_alpha": 0.0, "act_beta": 6.0}),
        ((0, 3, 5, 5), (2, 3), {}),
    ]
    for (n, c, h, w), (o, k), attrs in cases:
        g = attrs.get("group", 1)
        ins = [rand(rng, n, c, h, w), rand(rng, o, c // g, k, k), rand(rng, o)]
        yield Sample(ins, attrs, label=f"x{(n, c, h, w)} w{(o, c // g, k, k)} {attrs}")
    yield Sample([rand(rng, 1, 3, 6, 6), rand(rng, 2, 3, 3, 3)], {}, label="no bias")


register(
    OpSchema(
        "Conv",
        infer=_conv_infer,
        reference=_conv_reference,
        attrs=CONV_ATTRS,
        n_inputs=(2, 3),
        flops=_conv_flops,
        samples=_conv_samples,
        doc="2-D convolution, NCHW input, OIHW weight, optional bias, fused activation.",
    )
)

"""Convolution over 1 to 3 spatial axes (grouped, strided, dilated, padded) with a fused activation."""

from __future__ import annotations

import itertools

import numpy as np

from ..backend.kit.geometry import CONV_SPATIAL, conv_geometry
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
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
    "pads": Attr("ints", [], doc="begins then ends of the spatial axes (2-D: top, left, bottom, right); default 0"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
    "group": Attr("int", 1),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
    **FUSED_ACTIVATION_ATTRS,
}


def _conv_infer(ins, attrs):
    x, wt, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    geo = conv_geometry(x.shape, wt.shape, attrs, CONV_SPATIAL)
    if b is not None and b.shape != (wt.shape[0],):
        raise GraphError(f"Conv: bias must have shape ({wt.shape[0]},), got {b.shape}")
    return [TensorInfo(geo["out"], x.dtype)]


def conv_reference(x, w, b, geo):
    """Direct convolution in float64 over any number of spatial axes: the windows gathered tap by tap,
    then one einsum over all groups."""
    n, c = x.shape[:2]
    o, k = w.shape[0], x.ndim - 2
    g, pads, strides, dil = geo["group"], geo["pads"], geo["strides"], geo["dilations"]
    out_sizes = geo["out"][2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + k]) for i in range(k)])
    # windows (n, c, taps, *out), one strided slice copy per tap: a reshape or astype of a 7-D
    # sliding-window view instead is an element-by-element copy (seconds for one depthwise layer of a batch)
    taps = list(itertools.product(*(range(kk) for kk in geo["kernel"])))
    cols = np.empty((n, c, len(taps), *out_sizes), np.float64)
    for t, tap in enumerate(taps):
        cols[:, :, t] = xp[
            (slice(None), slice(None))
            + tuple(slice(j * d, j * d + s * (m - 1) + 1, s) for j, d, s, m in zip(tap, dil, strides, out_sizes))
        ]
    cg, og = c // g, o // g
    xs = cols.reshape(n, g, cg, len(taps), int(np.prod(out_sizes)))
    ws = w.reshape(g, og, cg, len(taps)).astype(np.float64)
    # depthwise (one channel in, one out per group) is a multiply-add over the taps: einsum's own loop is
    # faster there than the batched GEMM that optimize=True transposes into
    out = np.einsum("ngctp,goct->ngop", xs, ws, optimize=not (cg == 1 and og == 1)).reshape(geo["out"])
    if b is not None:
        out += b.reshape((1, o) + (1,) * k)
    return out.astype(x.dtype)


conv2d_reference = conv_reference  # the name the quantized convolutions (quant.py) import


def _conv_reference(ins, attrs):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    geo = conv_geometry(x.shape, w.shape, attrs, CONV_SPATIAL)
    y = conv_reference(x, w, b, geo)
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _conv_flops(ins, outs, attrs):
    return 2.0 * outs[0].size * float(np.prod(ins[1].shape[1:]))


def _conv_samples(rng):
    # (N, C, H, W), (O, K), attrs
    cases = [
        ((1, 3, 8, 8), (4, 3), {"pads": [1, 1, 1, 1]}),
        ((2, 5, 7, 9), (6, 1), {}),
        ((1, 8, 11, 11), (8, 3), {"group": 8, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ((1, 4, 10, 10), (6, 3), {"group": 2, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
        ((3, 3, 9, 7), (5, 5), {"strides": [2, 1], "pads": [2, 1, 1, 2], "activation": "relu"}),
        ((1, 16, 6, 6), (16, 3), {"auto_pad": "SAME_UPPER", "activation": "clip", "act_alpha": 0.0, "act_beta": 6.0}),
        ((1, 3, 9, 8), (5, 4), {"strides": [2, 3], "auto_pad": "SAME_LOWER"}),  # odd pad totals
        ((2, 4, 7, 10), (3, 2), {"strides": [1, 3], "auto_pad": "SAME_UPPER", "activation": "relu"}),
        ((0, 3, 5, 5), (2, 3), {}),
    ]
    for (n, c, h, w), (o, k), attrs in cases:
        g = attrs.get("group", 1)
        ins = [rand(rng, n, c, h, w), rand(rng, o, c // g, k, k), rand(rng, o)]
        yield Sample(ins, attrs, label=f"x{(n, c, h, w)} w{(o, c // g, k, k)} {attrs}")
    yield Sample([rand(rng, 1, 3, 6, 6), rand(rng, 2, 3, 3, 3)], {}, label="no bias")
    # 1-D and 3-D: (N, C, *spatial), (O, K), attrs
    for x, (o, k), attrs in [
        ((2, 4, 11), (6, 3), {"group": 2, "pads": [1, 2], "strides": [2]}),
        ((1, 3, 9), (4, 3), {"dilations": [2], "pads": [2, 1], "activation": "relu"}),
        ((1, 3, 7), (2, 4), {"strides": [2], "auto_pad": "SAME_LOWER"}),
        ((1, 2, 5, 7, 6), (3, 3), {"pads": [1, 0, 1, 1, 2, 0], "strides": [1, 2, 2]}),
        ((1, 4, 5, 3, 5), (4, 3), {"group": 4, "strides": [2, 1, 2], "auto_pad": "SAME_UPPER"}),
        ((2, 3, 7, 5, 3), (2, 2), {"dilations": [3, 2, 1], "strides": [2, 2, 1], "activation": "relu"}),
    ]:
        w = (o, x[1] // attrs.get("group", 1)) + (k,) * (len(x) - 2)
        yield Sample([rand(rng, *x), rand(rng, *w), rand(rng, o)], attrs, label=f"x{x} w{w} {attrs}")


register(
    OpSchema(
        "Conv",
        infer=_conv_infer,
        reference=_conv_reference,
        attrs=CONV_ATTRS,
        n_inputs=(2, 3),
        flops=_conv_flops,
        samples=_conv_samples,
        doc="Convolution over 1 to 3 spatial axes: (N, C, D1, ...) input, (M, C/group, k1, ...) weight, "
        "optional bias, fused activation.",
    )
)

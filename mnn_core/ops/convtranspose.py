"""Transposed convolution over 1 to 3 spatial axes (the gradient of Conv with respect to its input),
with a fused activation."""

from __future__ import annotations

import itertools

import numpy as np

from ..backend.kit.geometry import CONV_SPATIAL, conv_transpose_geometry
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .conv import FUSED_ACTIVATION_ATTRS
from .elementwise import apply_activation
from .schema import Attr, OpSchema, Sample, register

CONV_TRANSPOSE_ATTRS = {
    "kernel_shape": Attr("ints", [], doc="taken from the weight when empty"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="begins then ends (2-D: top, left, bottom, right) cropped from the full output"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
    "group": Attr("int", 1),
    "output_padding": Attr("ints", [], doc="extra cells at the end of each spatial axis; default 0"),
    "output_shape": Attr("ints", [], doc="the output's spatial sizes; when given, pads follow from it"),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
    **FUSED_ACTIVATION_ATTRS,
}


def _infer(ins, attrs):
    x, wt, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    geo = conv_transpose_geometry(x.shape, wt.shape, attrs, CONV_SPATIAL)
    if b is not None and b.shape != (geo["out"][1],):
        raise GraphError(f"ConvTranspose: bias must have shape ({geo['out'][1]},), got {b.shape}")
    if x.dtype != wt.dtype:
        raise GraphError(f"ConvTranspose needs input and weight of one dtype, got {x.dtype} and {wt.dtype}")
    return [TensorInfo(geo["out"], x.dtype)]


def conv_transpose_reference(x, w, b, geo):
    """Scatter: every kernel tap adds its input-weighted copy at a strided, dilated offset."""
    n, c = x.shape[:2]
    k, sizes = x.ndim - 2, x.shape[2:]
    g, strides, dil = geo["group"], geo["strides"], geo["dilations"]
    cg, mg = c // g, w.shape[1]
    full = np.zeros((n, mg * g) + tuple(geo["full"]), dtype=np.float64)
    xd, wd64 = x.astype(np.float64), w.astype(np.float64)
    for gi in range(g):
        xs = xd[:, gi * cg : (gi + 1) * cg]
        ws = wd64[gi * cg : (gi + 1) * cg]  # cg, mg, *kernel
        for tap in itertools.product(*(range(kk) for kk in geo["kernel"])):
            cells = tuple(slice(j * d, j * d + s * (m - 1) + 1, s) for j, d, s, m in zip(tap, dil, strides, sizes))
            full[(slice(None), slice(gi * mg, (gi + 1) * mg)) + cells] += np.einsum(
                "nc...,cm->nm...", xs, ws[(slice(None), slice(None)) + tap]
            )
    pads, out_sizes = geo["pads"], geo["out"][2:]
    out = full[(slice(None), slice(None)) + tuple(slice(p, p + m) for p, m in zip(pads[:k], out_sizes))]
    if b is not None:
        out = out + b.astype(np.float64).reshape((1, -1) + (1,) * k)
    return np.ascontiguousarray(out.astype(x.dtype))


def _reference(ins, attrs):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    y = conv_transpose_reference(x, w, b, conv_transpose_geometry(x.shape, w.shape, attrs, CONV_SPATIAL))
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _flops(ins, outs, attrs):
    return 2.0 * ins[0].size * float(np.prod(ins[1].shape[1:]))


def _samples(rng):
    # (N, C, H, W), (M/group, K), attrs
    cases = [
        ((1, 3, 5, 5), (4, 3), {}),
        ((2, 4, 4, 6), (3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
        ((1, 6, 5, 4), (2, 2), {"group": 3, "strides": [2, 3]}),
        ((1, 2, 4, 4), (3, 3), {"dilations": [2, 2], "pads": [1, 0, 2, 1]}),
        ((1, 4, 7, 5), (1, 3), {"group": 4, "strides": [2, 2], "activation": "relu"}),
        ((1, 3, 4, 4), (2, 4), {"strides": [2, 2], "output_shape": [9, 8]}),
        ((1, 3, 5, 3), (2, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        ((1, 3, 5, 3), (2, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
        ((2, 2, 3, 3), (5, 2), {"activation": "leaky_relu", "act_alpha": 0.1}),
        ((0, 3, 4, 4), (2, 3), {}),
    ]
    for (n, c, h, w), (mg, k), attrs in cases:
        ins = [rand(rng, n, c, h, w), rand(rng, c, mg, k, k), rand(rng, mg * attrs.get("group", 1))]
        yield Sample(ins, attrs, label=f"x{(n, c, h, w)} w{(c, mg, k, k)} {attrs}")
    yield Sample([rand(rng, 1, 2, 3, 5), rand(rng, 2, 3, 2, 3)], {"strides": [1, 2]}, label="no bias, 2x3 kernel")
    # 1-D and 3-D: (N, C, *spatial), (M/group, K), attrs
    for x, (mg, k), attrs in [
        ((2, 4, 7), (3, 3), {"group": 2, "strides": [2], "pads": [1, 2], "output_padding": [1]}),
        ((1, 3, 5), (2, 4), {"strides": [3], "auto_pad": "SAME_LOWER"}),
        ((1, 2, 3, 5, 4), (3, 3), {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "dilations": [1, 2, 1]}),
        ((1, 3, 3, 3, 5), (1, 2), {"group": 3, "strides": [2, 2, 1], "output_shape": [6, 5, 5]}),
    ]:
        w = (x[1], mg) + (k,) * (len(x) - 2)
        ins = [rand(rng, *x), rand(rng, *w), rand(rng, mg * attrs.get("group", 1))]
        yield Sample(ins, attrs, label=f"x{x} w{w} {attrs}")


register(
    OpSchema(
        "ConvTranspose",
        infer=_infer,
        reference=_reference,
        attrs=CONV_TRANSPOSE_ATTRS,
        n_inputs=(2, 3),
        flops=_flops,
        samples=_samples,
        doc="Transposed convolution over 1 to 3 spatial axes: (N, C, D1, ...) input, (C, M/group, k1, ...) "
        "weight, optional bias, fused activation.",
    )
)

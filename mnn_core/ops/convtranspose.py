"""2-D transposed convolution (the gradient of Conv with respect to its input), with a fused activation."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .conv import FUSED_ACTIVATION_ATTRS
from .elementwise import apply_activation
from .schema import Attr, OpSchema, Sample, register

CONV_TRANSPOSE_ATTRS = {
    "kernel_shape": Attr("ints", [], doc="taken from the weight when empty"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="[top, left, bottom, right] cropped from the full output; default 0"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
    "group": Attr("int", 1),
    "output_padding": Attr("ints", [], doc="extra rows/columns at the bottom/right; default 0"),
    "output_shape": Attr("ints", [], doc="[H, W] of the output; when given, pads follow from it"),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
    **FUSED_ACTIVATION_ATTRS,
}


def conv_transpose_geometry(x_shape, w_shape, attrs):
    """Resolve strides, dilations, pads and the output size, following the ONNX formulas."""
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise GraphError(f"ConvTranspose takes NCHW input and (C, M/group, kH, kW) weight, got {x_shape} and {w_shape}")
    n, c, h, w = x_shape
    ci, mg, kh, kw = w_shape
    group = attrs["group"]
    if group < 1 or c != ci or c % group:
        raise GraphError(f"ConvTranspose: input has {c} channels but weight {w_shape} with group={group} needs "
                         f"{ci} (a multiple of the group)")
    if list(attrs["kernel_shape"] or [kh, kw]) != [kh, kw]:
        raise GraphError(f"ConvTranspose: kernel_shape {attrs['kernel_shape']} disagrees with the weight {w_shape}")
    strides = attrs["strides"] or [1, 1]
    dil = attrs["dilations"] or [1, 1]
    out_pad = attrs["output_padding"] or [0, 0]
    if len(strides) != 2 or len(dil) != 2 or len(out_pad) != 2:
        raise GraphError(f"ConvTranspose: strides {strides}, dilations {dil} and output_padding {out_pad} "
                         "need 2 values each")
    if min(strides) < 1 or min(dil) < 1:
        raise GraphError("ConvTranspose: strides and dilations must be at least 1")
    # PyTorch's rule; onnxruntime is stricter (output_padding < stride)
    if any(not 0 <= p < max(s, d) for p, s, d in zip(out_pad, strides, dil)):
        raise GraphError(f"ConvTranspose: output_padding {out_pad} must be non-negative and smaller than the "
                         f"stride {strides} or the dilation {dil}")
    eff = [(kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1]
    full = [s * (i - 1) + e + p for s, i, e, p in zip(strides, (h, w), eff, out_pad)]  # before cropping pads
    target = attrs["output_shape"]
    if attrs["auto_pad"] in ("SAME_UPPER", "SAME_LOWER") and not target:
        target = [h * strides[0], w * strides[1]]
    if target:
        if len(target) != 2:
            raise GraphError(f"ConvTranspose: output_shape must be [H, W], got {target}")
        pads = [0, 0, 0, 0]
        for i in range(2):
            total = full[i] - target[i]
            if total < 0:
                raise GraphError(f"ConvTranspose: output_shape {target} is larger than the full output {full}")
            small, big = total // 2, total - total // 2
            # as ONNX: SAME_UPPER puts the odd pad at the end, otherwise at the start
            pads[i], pads[i + 2] = (small, big) if attrs["auto_pad"] == "SAME_UPPER" else (big, small)
    elif attrs["auto_pad"] == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = attrs["pads"] or [0, 0, 0, 0]
    if len(pads) != 4 or min(pads) < 0:
        raise GraphError(f"ConvTranspose: pads must be 4 non-negative ints, got {pads}")
    oh, ow = full[0] - pads[0] - pads[2], full[1] - pads[1] - pads[3]
    if oh < 1 or ow < 1:
        raise GraphError(f"ConvTranspose: pads {pads} leave nothing of the {full[0]}x{full[1]} output")
    return dict(kernel=[kh, kw], strides=strides, dilations=dil, pads=pads, full=full, group=group,
                out=(n, mg * group, oh, ow))


def _infer(ins, attrs):
    x, wt, b = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    geo = conv_transpose_geometry(x.shape, wt.shape, attrs)
    if b is not None and b.shape != (geo["out"][1],):
        raise GraphError(f"ConvTranspose: bias must have shape ({geo['out'][1]},), got {b.shape}")
    if x.dtype != wt.dtype:
        raise GraphError(f"ConvTranspose needs input and weight of one dtype, got {x.dtype} and {wt.dtype}")
    return [TensorInfo(geo["out"], x.dtype)]


def conv_transpose2d_reference(x, w, b, geo):
    """Scatter: every kernel tap adds its input-weighted copy at a strided, dilated offset."""
    n, c, h, wd = x.shape
    g, (sh, sw), (dh, dw) = geo["group"], geo["strides"], geo["dilations"]
    kh, kw = geo["kernel"]
    cg, mg = c // g, w.shape[1]
    full = np.zeros((n, mg * g) + tuple(geo["full"]), dtype=np.float64)
    xd, wd64 = x.astype(np.float64), w.astype(np.float64)
    for gi in range(g):
        xs = xd[:, gi * cg:(gi + 1) * cg]
        ws = wd64[gi * cg:(gi + 1) * cg]  # cg, mg, kh, kw
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (h - 1) + 1, sh)
                cols = slice(j * dw, j * dw + sw * (wd - 1) + 1, sw)
                full[:, gi * mg:(gi + 1) * mg, rows, cols] += np.einsum("nchw,cm->nmhw", xs, ws[:, :, i, j])
    pt, pl, _, _ = geo["pads"]
    _, _, oh, ow = geo["out"]
    out = full[:, :, pt:pt + oh, pl:pl + ow]
    if b is not None:
        out = out + b.astype(np.float64).reshape(1, -1, 1, 1)
    return np.ascontiguousarray(out.astype(x.dtype))


def _reference(ins, attrs):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    y = conv_transpose2d_reference(x, w, b, conv_transpose_geometry(x.shape, w.shape, attrs))
    return [apply_activation(y, attrs["activation"], attrs["act_alpha"], attrs["act_beta"])]


def _flops(ins, outs, attrs):
    x, w = ins[0], ins[1]
    return 2.0 * x.size * w.shape[1] * w.shape[2] * w.shape[3]


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


register(
    OpSchema(
        "ConvTranspose",
        infer=_infer,
        reference=_reference,
        attrs=CONV_TRANSPOSE_ATTRS,
        n_inputs=(2, 3),
        flops=_flops,
        samples=_samples,
        doc="2-D transposed convolution, NCHW input, (C, M/group, kH, kW) weight, optional bias, fused activation.",
    )
)

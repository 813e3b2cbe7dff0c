"""2-D pooling over NCHW: MaxPool, AveragePool and their global forms."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand, resolve_pads
from .schema import Attr, OpSchema, Sample, register

_FLOAT = ("float32", "float16")

POOL_ATTRS = {
    "kernel_shape": Attr("ints", doc="[kH, kW]"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="[top, left, bottom, right]; default 0"),
    "ceil_mode": Attr("int", 0, (0, 1), "round the output size up instead of down"),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
}


def pool_geometry(x_shape, attrs, op):
    """Resolve kernel, strides, dilations and explicit pads; return them and the output size.

    `extra` is how far the last window (ceil_mode) reaches past the bottom/right
    padding: those positions are neither input nor padding and never count.
    """
    if len(x_shape) != 4:
        raise GraphError(f"{op} takes NCHW input (4-D), got shape {x_shape}")
    n, c, h, w = x_shape
    kernel = attrs["kernel_shape"]
    strides = attrs["strides"] or [1, 1]
    dil = attrs.get("dilations") or [1, 1]
    if len(kernel) != 2 or len(strides) != 2 or len(dil) != 2:
        raise GraphError(f"{op}: kernel_shape, strides and dilations need 2 values each, got "
                         f"{kernel}, {strides}, {dil}")
    if min(kernel) < 1 or min(strides) < 1 or min(dil) < 1:
        raise GraphError(f"{op}: kernel_shape, strides and dilations must be at least 1, "
                         f"got {kernel}, {strides}, {dil}")
    eff = [(kernel[i] - 1) * dil[i] + 1 for i in range(2)]
    sizes = (h, w)
    # the dilated kernel decides SAME pads, as the ONNX spec says (onnxruntime 1.32 uses the undilated one)
    pads = resolve_pads(op, attrs, sizes, strides, eff)
    if max(pads[0], pads[2]) >= eff[0] or max(pads[1], pads[3]) >= eff[1]:
        raise GraphError(f"{op}: pads {pads} must be smaller than the kernel {eff}")
    out, extra = [], []
    for i, size in enumerate(sizes):
        span = size + pads[i] + pads[i + 2] - eff[i]
        if span < 0:
            raise GraphError(f"{op}: kernel {eff} does not fit input {h}x{w} with pads {pads}")
        o = (-(-span // strides[i]) if attrs["ceil_mode"] else span // strides[i]) + 1
        if attrs["ceil_mode"] and (o - 1) * strides[i] >= size + pads[i]:
            o -= 1  # the last window must start inside the input or its leading padding
        out.append(o)
        extra.append(max(0, (o - 1) * strides[i] + eff[i] - (size + pads[i] + pads[i + 2])))
    return dict(kernel=list(kernel), strides=strides, dilations=dil, pads=pads, extra=extra,
                eff=eff, out=(n, c, out[0], out[1]))


def _windows(x, geo, fill, pad_fill=None):
    """Every pooling window: an (N, C, OH, OW, kH, kW) view of the padded input."""
    (pt, pl, pb, pr), (eh, ew) = geo["pads"], geo["extra"]
    pad_fill = fill if pad_fill is None else pad_fill
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad_fill)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, eh), (0, ew)), constant_values=fill)
    win = np.lib.stride_tricks.sliding_window_view(xp, tuple(geo["eff"]), axis=(2, 3))
    (sh, sw), (dh, dw) = geo["strides"], geo["dilations"]
    _, _, oh, ow = geo["out"]
    return win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :oh, :ow]


def _pool_infer(op, dtypes):
    def infer(ins, attrs):
        x = ins[0]
        if x.dtype not in dtypes:
            raise GraphError(f"{op} takes {', '.join(dtypes)} input, got {x.dtype}")
        return [TensorInfo(pool_geometry(x.shape, attrs, op)["out"], x.dtype)]

    return infer


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _maxpool_reference(ins, attrs):
    x = ins[0]
    geo = pool_geometry(x.shape, attrs, "MaxPool")
    return [_windows(x, geo, _lowest(x.dtype)).max(axis=(-2, -1)).astype(x.dtype)]


def _avgpool_reference(ins, attrs):
    x = ins[0]
    geo = pool_geometry(x.shape, attrs, "AveragePool")
    total = _windows(x.astype(np.float64), geo, 0.0).sum(axis=(-2, -1))
    # the divisor counts input positions, plus the padding when count_include_pad
    mask = np.ones((1, 1) + x.shape[2:])
    count = _windows(mask, geo, 0.0, pad_fill=float(attrs["count_include_pad"])).sum(axis=(-2, -1))
    return [(total / count).astype(x.dtype)]


def _pool_flops(ins, outs, attrs):
    kh, kw = attrs["kernel_shape"]
    return float(outs[0].size * kh * kw)


def _pool_samples(op):
    def samples(rng):
        cases = [
            ((1, 3, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
            ((2, 4, 7, 9), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
            ((1, 2, 11, 10), {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 0, 1]}),
            ((1, 3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
            ((1, 2, 8, 6), {"kernel_shape": [2, 3], "strides": [3, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
            ((1, 3, 9, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
            ((1, 3, 6, 9), {"kernel_shape": [2, 4], "strides": [2, 3], "auto_pad": "SAME_LOWER"}),
            ((2, 1, 5, 5), {"kernel_shape": [5, 5], "auto_pad": "VALID"}),
            ((0, 3, 6, 6), {"kernel_shape": [2, 2]}),
        ]
        if op == "MaxPool":
            cases += [
                ((1, 2, 9, 9), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
                ((1, 2, 10, 8), {"kernel_shape": [2, 2], "dilations": [2, 1], "strides": [2, 2], "ceil_mode": 1}),
            ]
        else:
            cases += [
                ((2, 4, 7, 9), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
                ((1, 2, 8, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                "count_include_pad": 1, "ceil_mode": 1}),
            ]
        for shape, attrs in cases:
            yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
        if op == "MaxPool":
            x = rng.integers(-128, 128, size=(1, 2, 6, 6)).astype("int8")
            yield Sample([x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, label="int8 padded")

    return samples


register(
    OpSchema(
        "MaxPool",
        infer=_pool_infer("MaxPool", _FLOAT + ("int8", "uint8")),
        reference=_maxpool_reference,
        attrs={**POOL_ATTRS, "dilations": Attr("ints", [], doc="default 1 per spatial axis")},
        flops=_pool_flops,
        samples=_pool_samples("MaxPool"),
        doc="2-D max pooling over NCHW; padding never wins.",
    )
)

register(
    OpSchema(
        "AveragePool",
        infer=_pool_infer("AveragePool", _FLOAT),
        reference=_avgpool_reference,
        attrs={**POOL_ATTRS, "count_include_pad": Attr("int", 0, (0, 1), "divide by the window size, pads included")},
        flops=_pool_flops,
        samples=_pool_samples("AveragePool"),
        doc="2-D average pooling over NCHW.",
    )
)


# -- global pooling: one value per (N, C) -------------------------------------------


def _global_infer(op, dtypes):
    def infer(ins, attrs):
        x = ins[0]
        if len(x.shape) != 4:
            raise GraphError(f"{op} takes NCHW input (4-D), got shape {x.shape}")
        if x.dtype not in dtypes:
            raise GraphError(f"{op} takes {', '.join(dtypes)} input, got {x.dtype}")
        if x.shape[2] * x.shape[3] == 0:
            raise GraphError(f"{op}: the spatial size of {x.shape} is empty; there is nothing to pool")
        return [TensorInfo(x.shape[:2] + (1, 1), x.dtype)]

    return infer


def _global_samples(op):
    def samples(rng):
        for shape in [(1, 3, 7, 7), (2, 16, 5, 9), (3, 1, 1, 1), (1, 8, 1, 13), (0, 4, 3, 3)]:
            yield Sample([rand(rng, *shape)], label=str(shape))
        yield Sample([rand(rng, 1, 2, 4, 4).astype("float16")], label="float16")

    return samples


register(
    OpSchema(
        "GlobalAveragePool",
        infer=_global_infer("GlobalAveragePool", _FLOAT),
        reference=lambda ins, attrs: [ins[0].astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(ins[0].dtype)],
        flops=lambda ins, outs, attrs: float(ins[0].size),
        samples=_global_samples("GlobalAveragePool"),
        doc="Mean over H and W of NCHW input; output N x C x 1 x 1.",
    )
)

register(
    OpSchema(
        "GlobalMaxPool",
        infer=_global_infer("GlobalMaxPool", _FLOAT),
        reference=lambda ins, attrs: [ins[0].max(axis=(2, 3), keepdims=True)],
        flops=lambda ins, outs, attrs: float(ins[0].size),
        samples=_global_samples("GlobalMaxPool"),
        doc="Max over H and W of NCHW input; output N x C x 1 x 1.",
    )
)

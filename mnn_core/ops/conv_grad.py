"""Backward ops of convolution and pooling (NCHW).

ConvGradInput and ConvGradWeight are the two halves of a convolution's
backward pass, as in cuDNN and MNN; a backend may claim either. Shapes the
gradient cannot recover from its inputs (the forward input's size: strides
lose it) are attributes, fixed when the training graph is traced.

The reference kernels loop over the kernel's taps (kh * kw iterations): each
tap is one strided slice of the padded input, so im2col and col2im are k*k
plain array copies or adds, and the products are one BLAS GEMM per group in
a channel-major layout, (C * kh * kw, N * OH * OW).
"""

from __future__ import annotations

import numpy as np

from ..backend.kit.geometry import conv_geometry
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand, same_dtype
from .schema import Attr, OpSchema, Sample, register

_GEOMETRY_ATTRS = {
    "kernel_shape": Attr("ints", doc="[kh, kw] of the forward window"),
    "strides": Attr("ints", [], doc="default 1 per spatial axis"),
    "pads": Attr("ints", [], doc="[top, left, bottom, right]; default 0"),
    "dilations": Attr("ints", [], doc="default 1 per spatial axis"),
}


def _tap(geo: dict, i: int, j: int, out_hw: tuple) -> tuple:
    """The slice of the padded input that kernel tap (i, j) reads, over every output position."""
    (sh, sw), (dh, dw) = geo["strides"], geo["dilations"]
    oh, ow = out_hw
    return (
        slice(None),
        slice(None),
        slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
        slice(j * dw, j * dw + sw * (ow - 1) + 1, sw),
    )


def _taps(geo: dict):
    kh, kw = geo["kernel"]
    return [(i, j) for i in range(kh) for j in range(kw)]


def _pad(x: np.ndarray, pads, fill=0.0) -> np.ndarray:
    pt, pl, pb, pr = pads
    return np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill) if any(pads) else x


def _im2col(xp: np.ndarray, geo: dict, out_hw: tuple) -> np.ndarray:
    """(C * kh * kw, N * OH * OW): row (c, tap) holds what tap reads of channel c."""
    n, c = xp.shape[:2]
    taps = _taps(geo)
    cols = np.empty((c, len(taps), n) + tuple(out_hw), dtype=xp.dtype)
    for t, (i, j) in enumerate(taps):
        cols[:, t] = xp[_tap(geo, i, j, out_hw)].transpose(1, 0, 2, 3)
    return cols.reshape(c * len(taps), -1)


def _col2im(cols: np.ndarray, padded_shape: tuple, geo: dict, out_hw: tuple) -> np.ndarray:
    """The adjoint of _im2col: add every tap's rows back onto a zero padded input."""
    n, c = padded_shape[:2]
    taps = _taps(geo)
    cols = cols.reshape((c, len(taps), n) + tuple(out_hw))
    out = np.zeros((c, n) + tuple(padded_shape[2:]), dtype=cols.dtype)  # channel-major, transposed once
    for t, (i, j) in enumerate(taps):
        out[_tap(geo, i, j, out_hw)] += cols[:, t]
    return out.transpose(1, 0, 2, 3)


def _channel_major(dy: np.ndarray) -> np.ndarray:
    """(N, O, OH, OW) -> (O, N * OH * OW)."""
    return np.ascontiguousarray(dy.transpose(1, 0, 2, 3)).reshape(dy.shape[1], -1)


def _unpad(xp: np.ndarray, pads: list, shape: tuple) -> np.ndarray:
    h, w = shape[2:]
    return np.ascontiguousarray(xp[:, :, pads[0] : pads[0] + h, pads[1] : pads[1] + w])


# -- convolution -------------------------------------------------------------------------

_CONV_GRAD_ATTRS = {**_GEOMETRY_ATTRS, "group": Attr("int", 1)}


def _conv_attrs(attrs: dict) -> dict:
    return {**attrs, "auto_pad": "NOTSET"}


def _conv_grad_input_infer(ins, attrs):
    dy, w = ins
    shape = tuple(attrs["input_shape"])
    geo = conv_geometry(shape, w.shape, _conv_attrs(attrs))
    if dy.shape != geo["out"]:
        raise GraphError(f"ConvGradInput: dy has shape {dy.shape}, the convolution makes {geo['out']}")
    return [TensorInfo(shape, same_dtype(ins, "ConvGradInput"))]


def _conv_grad_input(ins, attrs):
    dy, w = ins
    shape = tuple(attrs["input_shape"])
    geo = conv_geometry(shape, w.shape, _conv_attrs(attrs))
    n, c, h, wd = shape
    g, pads = geo["group"], geo["pads"]
    o, cg, kh, kw = w.shape
    og = o // g
    d2 = _channel_major(dy)
    # per group (cg * kh * kw, og) @ (og, N * OH * OW), all groups in one stacked matmul (depthwise: 100+ groups)
    wg, dg = w.reshape(g, og, cg * kh * kw).transpose(0, 2, 1), d2.reshape(g, og, -1)
    # one output channel per group (depthwise): an outer product, which broadcasting does faster than GEMMs
    cols = (wg * dg if og == 1 else np.matmul(wg, dg)).reshape(c * kh * kw, -1)
    padded = (n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3])
    return [_unpad(_col2im(cols, padded, geo, dy.shape[2:]), pads, shape)]


def _weight_shape(x_shape, dy_shape, attrs):
    return (dy_shape[1], x_shape[1] // attrs["group"], *attrs["kernel_shape"])


def _conv_grad_weight_infer(ins, attrs):
    dy, x = ins
    wshape = _weight_shape(x.shape, dy.shape, attrs)
    geo = conv_geometry(x.shape, wshape, _conv_attrs(attrs))
    if dy.shape != geo["out"]:
        raise GraphError(f"ConvGradWeight: dy has shape {dy.shape}, the convolution makes {geo['out']}")
    dtype = same_dtype(ins, "ConvGradWeight")
    return [TensorInfo(wshape, dtype), TensorInfo((wshape[0],), dtype)]


def _conv_grad_weight(ins, attrs):
    dy, x = ins
    wshape = _weight_shape(x.shape, dy.shape, attrs)
    geo = conv_geometry(x.shape, wshape, _conv_attrs(attrs))
    cols = _im2col(_pad(x, geo["pads"]), geo, dy.shape[2:])
    d2 = _channel_major(dy)
    g = geo["group"]
    og, rows = wshape[0] // g, cols.shape[0] // g
    # per group (og, N * OH * OW) @ (N * OH * OW, cg * kh * kw), all groups in one stacked matmul
    dw = np.matmul(d2.reshape(g, og, -1), cols.reshape(g, rows, -1).transpose(0, 2, 1))
    return [dw.reshape(wshape), d2.sum(axis=1).astype(dy.dtype)]


_CONV_CASES = [  # x shape, (out channels, kernel), attrs
    ((2, 3, 8, 8), (4, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 4, 9, 7), (6, 3), {"strides": [2, 2], "pads": [1, 0, 0, 1]}),
    ((1, 4, 10, 10), (4, 3), {"group": 2, "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((2, 6, 6, 6), (6, 3), {"group": 6, "strides": [2, 1]}),
]


def _conv_grad_samples(which: str):
    def samples(rng):
        for xs, (o, k), attrs in _CONV_CASES:
            g = attrs.get("group", 1)
            full = {"kernel_shape": [k, k], **attrs}
            geo = conv_geometry(
                xs,
                (o, xs[1] // g, k, k),
                {"strides": [], "dilations": [], "pads": [], "auto_pad": "NOTSET", "group": 1, **full},
            )
            dy = rand(rng, *geo["out"])
            if which == "input":
                yield Sample([dy, rand(rng, o, xs[1] // g, k, k)], {**full, "input_shape": list(xs)}, label=str(full))
            else:
                yield Sample([dy, rand(rng, *xs)], full, label=str(full))

    return samples


register(
    OpSchema(
        "ConvGradInput",
        infer=_conv_grad_input_infer,
        reference=_conv_grad_input,
        attrs={**_CONV_GRAD_ATTRS, "input_shape": Attr("ints", doc="NCHW shape of the forward input")},
        n_inputs=(2, 2),
        flops=lambda ins, outs, attrs: 2.0 * ins[0].size * ins[1].shape[1] * ins[1].shape[2] * ins[1].shape[3],
        samples=_conv_grad_samples("input"),
        doc="Backward of Conv to its input: (dy, w) -> dx (a transposed convolution).",
    )
)

register(
    OpSchema(
        "ConvGradWeight",
        infer=_conv_grad_weight_infer,
        reference=_conv_grad_weight,
        attrs=_CONV_GRAD_ATTRS,
        n_inputs=(2, 2),
        n_outputs=2,
        flops=lambda ins, outs, attrs: 2.0 * ins[0].size * outs[0].shape[1] * outs[0].shape[2] * outs[0].shape[3],
        samples=_conv_grad_samples("weight"),
        doc="Backward of Conv to its weight and bias: (dy, x) -> (dw, db); a node may list dw only.",
    )
)

# -- pooling -------------------------------------------------------------------------------


def pool_grad_geometry(x_shape: tuple, attrs: dict) -> dict:
    """Kernel, strides, dilations, pads and output size of a 2-D pooling window."""
    if len(x_shape) != 4:
        raise GraphError(f"pooling takes NCHW input (4-D), got {x_shape}")
    kernel = list(attrs["kernel_shape"])
    strides = attrs["strides"] or [1, 1]
    dil = attrs.get("dilations") or [1, 1]
    pads = attrs["pads"] or [0, 0, 0, 0]
    if len(kernel) != 2 or len(strides) != 2 or len(dil) != 2 or len(pads) != 4:
        raise GraphError(f"pooling: need 2 kernel sizes, strides, dilations and 4 pads, got {attrs}")
    out = []
    for i, size in enumerate(x_shape[2:]):
        eff = (kernel[i] - 1) * dil[i] + 1
        span = size + pads[i] + pads[i + 2] - eff
        if span < 0:
            raise GraphError(f"pooling: window {eff} does not fit input {x_shape[2:]} with pads {pads}")
        n = (-(-span // strides[i]) if attrs.get("ceil_mode") else span // strides[i]) + 1
        if attrs.get("ceil_mode") and (n - 1) * strides[i] >= size + pads[i]:
            n -= 1  # the last window must start inside the input or its leading pad
        out.append(n)
    return dict(kernel=kernel, strides=strides, dilations=dil, pads=pads, out=tuple(x_shape[:2]) + tuple(out))


def _padded(x_shape, geo):
    """Padded size covering every window, ceil-mode overhang included (tail pads grown)."""
    pads = list(geo["pads"])
    for i in range(2):
        need = (geo["out"][2 + i] - 1) * geo["strides"][i] + (geo["kernel"][i] - 1) * geo["dilations"][i] + 1
        pads[i + 2] = max(pads[i + 2], need - x_shape[2 + i] - pads[i])
    return pads


def _max_pool_grad(ins, attrs):
    dy, x = ins
    geo = pool_grad_geometry(x.shape, attrs)
    pads = _padded(x.shape, geo)
    xp = _pad(x, pads, -np.inf)
    out_hw = geo["out"][2:]
    best = np.full(geo["out"], -np.inf, dtype=x.dtype)
    arg = np.zeros(geo["out"], dtype=np.int32)
    for t, (i, j) in enumerate(_taps(geo)):  # the first maximum of each window wins, as in PyTorch
        v = xp[_tap(geo, i, j, out_hw)]
        better = v > best
        np.copyto(best, v, where=better)
        np.copyto(arg, t, where=better)
    dxp = np.zeros(xp.shape, dtype=dy.dtype)
    for t, (i, j) in enumerate(_taps(geo)):
        dxp[_tap(geo, i, j, out_hw)] += np.where(arg == t, dy, 0)
    return [_unpad(dxp, pads, x.shape)]


def _avg_counts(x_shape, geo, pads, include_pad):
    """How many cells each output window averaged over."""
    h, w = x_shape[2:]
    inside = np.zeros((1, 1, h + pads[0] + pads[2], w + pads[1] + pads[3]))
    if include_pad:  # the declared pads count, the ceil-mode overhang does not
        p = geo["pads"]
        inside[:, :, : h + p[0] + p[2], : w + p[1] + p[3]] = 1
    else:
        inside[:, :, pads[0] : pads[0] + h, pads[1] : pads[1] + w] = 1
    return sum(inside[_tap(geo, i, j, geo["out"][2:])] for i, j in _taps(geo))


def _average_pool_grad(ins, attrs):
    (dy,) = ins
    shape = tuple(attrs["input_shape"])
    geo = pool_grad_geometry(shape, attrs)
    pads = _padded(shape, geo)
    share = (dy / _avg_counts(shape, geo, pads, attrs["count_include_pad"])).astype(dy.dtype)
    dxp = np.zeros((shape[0], shape[1], shape[2] + pads[0] + pads[2], shape[3] + pads[1] + pads[3]), dy.dtype)
    for i, j in _taps(geo):
        dxp[_tap(geo, i, j, geo["out"][2:])] += share
    return [_unpad(dxp, pads, shape)]


def _max_pool_grad_infer(ins, attrs):
    geo = pool_grad_geometry(ins[1].shape, attrs)
    if ins[0].shape != geo["out"]:
        raise GraphError(f"MaxPoolGrad: dy has shape {ins[0].shape}, the pooling makes {geo['out']}")
    return [TensorInfo(ins[1].shape, same_dtype(ins, "MaxPoolGrad"))]


def _average_pool_grad_infer(ins, attrs):
    shape = tuple(attrs["input_shape"])
    geo = pool_grad_geometry(shape, attrs)
    if ins[0].shape != geo["out"]:
        raise GraphError(f"AveragePoolGrad: dy has shape {ins[0].shape}, the pooling makes {geo['out']}")
    return [TensorInfo(shape, ins[0].dtype)]


_POOL_CASES = [
    ((2, 3, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ((1, 2, 7, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 3, 7, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 6, 5), {"kernel_shape": [3, 2], "strides": [1, 1]}),
]


def _pool_grad_samples(kind: str):
    def samples(rng):
        for xs, attrs in _POOL_CASES:
            full = {"strides": [], "pads": [], "dilations": [], "ceil_mode": 0, **attrs}
            dy = rand(rng, *pool_grad_geometry(xs, full)["out"])
            if kind == "max":
                yield Sample([dy, rand(rng, *xs)], attrs, label=str(attrs))
            else:
                for include in (0, 1):
                    yield Sample(
                        [dy],
                        {**attrs, "input_shape": list(xs), "count_include_pad": include},
                        label=f"{attrs} count_include_pad={include}",
                    )

    return samples


_POOL_ATTRS = {**_GEOMETRY_ATTRS, "ceil_mode": Attr("int", 0, (0, 1))}

register(
    OpSchema(
        "MaxPoolGrad",
        infer=_max_pool_grad_infer,
        reference=_max_pool_grad,
        attrs=_POOL_ATTRS,
        n_inputs=(2, 2),
        samples=_pool_grad_samples("max"),
        doc="Backward of MaxPool: (dy, x) -> dx, routing each gradient to its window's first maximum.",
    )
)

register(
    OpSchema(
        "AveragePoolGrad",
        infer=_average_pool_grad_infer,
        reference=_average_pool_grad,
        attrs={
            **_POOL_ATTRS,
            "count_include_pad": Attr("int", 0, (0, 1)),
            "input_shape": Attr("ints", doc="NCHW shape of the forward input"),
        },
        samples=_pool_grad_samples("avg"),
        doc="Backward of AveragePool: (dy) -> dx, spreading each gradient evenly over its window.",
    )
)


def _global_pool_grad_infer(ins, attrs):
    shape = tuple(attrs["input_shape"])
    if ins[0].shape != shape[:2] + (1,) * (len(shape) - 2):
        raise GraphError(f"GlobalAveragePoolGrad: dy has shape {ins[0].shape} for input {shape}")
    return [TensorInfo(shape, ins[0].dtype)]


def _global_pool_grad(ins, attrs):
    shape = tuple(attrs["input_shape"])
    spatial = int(np.prod(shape[2:], dtype=np.int64))
    return [np.ascontiguousarray(np.broadcast_to(ins[0] / np.asarray(spatial, ins[0].dtype), shape))]


register(
    OpSchema(
        "GlobalAveragePoolGrad",
        infer=_global_pool_grad_infer,
        reference=_global_pool_grad,
        attrs={"input_shape": Attr("ints", doc="shape of the forward input")},
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 3, 1, 1)], {"input_shape": [2, 3, 5, 4]}),
                Sample([rand(rng, 1, 8, 1, 1)], {"input_shape": [1, 8, 7, 7]}),
            ]
        ),
        doc="Backward of GlobalAveragePool: (dy) -> dx = dy / (H*W) broadcast over the window.",
    )
)

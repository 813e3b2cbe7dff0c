"""Image ops with ONNX semantics: GridSample, LpPool, LRN, MaxUnpool and Col2Im.

GridSample and LpPool take any number of spatial axes (NC + 1..3 of them)."""

from __future__ import annotations

import itertools

import numpy as np

from ..backend.kit.geometry import window_pads
from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

# -- GridSample --------------------------------------------------------------------------------------

GRID_MODES = ("linear", "nearest", "cubic", "bilinear", "bicubic")


def _grid_infer(ins, attrs):
    x, grid = ins
    k = len(x.shape) - 2
    if k < 1 or len(grid.shape) != k + 2 or grid.shape[0] != x.shape[0] or grid.shape[-1] != k:
        raise GraphError(f"GridSample: grid {grid.shape} does not fit input {x.shape} (want [N, *out, {k}])")
    return [TensorInfo((x.shape[0], x.shape[1]) + tuple(grid.shape[1:-1]), x.dtype)]


def _reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Reflect coordinates by the near border until they fall in [lo, hi]."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    below, above = lo - x, x - hi
    nb, na = np.floor(below / span), np.floor(above / span)
    rb, ra = below - nb * span, above - na * span
    out = np.where(x < lo, np.where(nb % 2 == 0, lo + rb, hi - rb), x)
    return np.where(x > hi, np.where(na % 2 == 0, hi - ra, lo + ra), out)


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> list:
    t = np.abs(t)
    return [
        ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
        ((a + 2) * t - (a + 3)) * t * t + 1,
        ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
        ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
    ]


def _grid_sample(ins, attrs):
    x, grid = ins
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(attrs["mode"], attrs["mode"])
    pad, align = attrs["padding_mode"], attrs["align_corners"]
    n, c = x.shape[:2]
    dims = x.shape[2:]
    k = len(dims)
    out_shape = grid.shape[1:-1]
    coords, lows, highs = [], [], []
    for i, d in enumerate(dims):
        g = grid[..., k - 1 - i].astype(np.float32)  # the grid's last axis lists x (width) first
        pos = (g + 1) / 2 * (d - 1) if align else ((g + 1) * d - 1) / 2
        lo, hi = (0.0, d - 1.0) if align else (-0.5, d - 0.5)
        if mode == "nearest":
            pos = np.rint(pos)
        outside = (pos < lo) | (pos > hi)
        if pad == "border":
            pos = np.where(outside, np.clip(pos, 0, d - 1), pos)
        elif pad == "reflection":
            pos = np.where(outside, _reflect(pos, lo, hi), pos)
        coords.append(pos.astype(np.float64))
        lows.append(lo)
        highs.append(hi)

    def taps(pos, i):
        if mode == "nearest":
            return [(pos.astype(np.int64), np.ones_like(pos))]
        base = np.floor(pos)
        t = pos - base
        if mode == "linear":
            return [(base.astype(np.int64), 1 - t), (base.astype(np.int64) + 1, t)]
        return [(base.astype(np.int64) + j - 1, w) for j, w in enumerate(_cubic_weights(t))]

    batch = np.arange(n).reshape((n,) + (1,) * len(out_shape))
    y = np.zeros((n,) + tuple(out_shape) + (c,), np.float64)
    xt = np.moveaxis(x.astype(np.float64), 1, -1)  # N, *dims, C
    for combo in itertools.product(*[taps(p, i) for i, p in enumerate(coords)]):
        weight = np.ones((n,) + tuple(out_shape))
        index, valid = [], np.ones_like(weight, bool)
        for i, (idx, w) in enumerate(combo):
            weight = weight * w
            d = dims[i]
            if pad == "zeros":
                valid &= (idx >= 0) & (idx < d)
                idx = np.clip(idx, 0, d - 1)
            elif pad == "border":
                idx = np.clip(idx, 0, d - 1)
            else:
                idx = np.trunc(_reflect(idx.astype(np.float64), lows[i], highs[i])).astype(np.int64)
                idx = np.clip(idx, 0, d - 1)
            index.append(idx)
        values = xt[(batch, *index)]
        y += np.where(valid[..., None], values, 0) * weight[..., None]
    return [np.moveaxis(y, -1, 1).astype(x.dtype)]


def _grid_samples(rng):
    for mode in ("linear", "nearest", "cubic"):
        for pad in ("zeros", "border", "reflection"):
            if mode == "cubic" and pad != "zeros":
                continue  # ONNX's reference clamps cubic taps unlike ONNX Runtime (and torch) do
            yield Sample(
                [rand(rng, 1, 2, 4, 5), rand(rng, 1, 3, 6, 2, low=-1.3, high=1.3)],
                {"mode": mode, "padding_mode": pad, "align_corners": int(pad == "border")},
            )
    yield Sample([rand(rng, 2, 1, 3, 4, 2), rand(rng, 2, 2, 2, 3, 3, low=-1, high=1)], {"mode": "linear"})


register(
    OpSchema(
        "GridSample",
        infer=_grid_infer,
        reference=_grid_sample,
        n_inputs=(2, 2),
        attrs={
            "mode": Attr("str", "linear", GRID_MODES),
            "align_corners": Attr("int", 0, (0, 1)),
            "padding_mode": Attr("str", "zeros", ("zeros", "border", "reflection")),
        },
        samples=_grid_samples,
        doc="Sample the input at grid locations (normalized to [-1, 1]) by interpolation.",
    )
)


# -- LpPool -------------------------------------------------------------------------------------------


def lp_pool_geometry(shape, attrs, op):
    """Explicit pads, strides, dilations and the output size of an N-D pooling window."""
    dims = list(shape[2:])
    k = len(dims)
    kernel = attrs["kernel_shape"]
    if len(kernel) != k:
        raise GraphError(f"{op}: kernel_shape {kernel} does not fit input {shape}")
    strides = attrs["strides"] or [1] * k
    dil = attrs["dilations"] or [1] * k
    eff = [(kk - 1) * d + 1 for kk, d in zip(kernel, dil)]
    pads = window_pads(op, attrs, dims, strides, eff)
    out = []
    for i, size in enumerate(dims):
        span = size + pads[i] + pads[i + k] - eff[i]
        o = (-(-span // strides[i]) if attrs["ceil_mode"] else span // strides[i]) + 1
        if attrs["ceil_mode"] and (o - 1) * strides[i] >= size + pads[i]:
            o -= 1  # the last window must start inside the input or its left padding
        out.append(o)
    if min(out, default=1) < 1:
        raise GraphError(f"{op}: window {eff} does not fit input {shape} with pads {pads}")
    return pads, strides, dil, out


def _lp_pool_infer(ins, attrs):
    _, _, _, out = lp_pool_geometry(ins[0].shape, attrs, "LpPool")
    return [TensorInfo(tuple(ins[0].shape[:2]) + tuple(out), ins[0].dtype)]


def _lp_pool(ins, attrs):
    x = ins[0]
    pads, strides, dil, out = lp_pool_geometry(x.shape, attrs, "LpPool")
    k = x.ndim - 2
    kernel = attrs["kernel_shape"]
    p = attrs["p"]
    widths = [(0, 0), (0, 0)]
    for i in range(k):  # pad the end far enough for ceil_mode windows too
        need = (out[i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - (x.shape[2 + i] + pads[i])
        widths.append((pads[i], max(need, 0)))
    xp = np.pad(np.abs(x.astype(np.float64)) ** p, widths)
    y = np.zeros(x.shape[:2] + tuple(out))
    for offset in itertools.product(*[range(kk) for kk in kernel]):
        sl = tuple(slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, n, s in zip(offset, dil, out, strides))
        y += xp[(slice(None), slice(None)) + sl]
    return [(y ** (1.0 / p)).astype(x.dtype)]


_POOL_ATTRS = {
    "kernel_shape": Attr("ints"),
    "strides": Attr("ints", []),
    "pads": Attr("ints", []),
    "dilations": Attr("ints", []),
    "ceil_mode": Attr("int", 0, (0, 1)),
    "auto_pad": Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")),
}

register(
    OpSchema(
        "LpPool",
        infer=_lp_pool_infer,
        reference=_lp_pool,
        attrs={**_POOL_ATTRS, "p": Attr("int", 2)},
        doc="(sum over each window of |x|^p)^(1/p), zero padding.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 1, 2, 7, 7)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
                Sample([rand(rng, 2, 3, 9)], {"kernel_shape": [2], "p": 3}),
                Sample([rand(rng, 1, 1, 5, 6)], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
                Sample([rand(rng, 1, 1, 5, 7)], {"kernel_shape": [2, 2], "dilations": [1, 2]}),
                Sample([rand(rng, 1, 1, 6, 6)], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
            ]
        ),
    )
)


# -- LRN ---------------------------------------------------------------------------------------------


def _lrn(ins, attrs):
    x = ins[0].astype(np.float64)
    size = attrs["size"]
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = np.pad(x * x, [(0, 0), (lo, hi)] + [(0, 0)] * (x.ndim - 2))
    total = sum(sq[:, i : i + x.shape[1]] for i in range(size))
    return [(x / (attrs["bias"] + attrs["alpha"] / size * total) ** attrs["beta"]).astype(ins[0].dtype)]


register(
    OpSchema(
        "LRN",
        infer=lambda ins, attrs: [ins[0]],
        reference=_lrn,
        attrs={
            "size": Attr("int"),
            "alpha": Attr("float", 1e-4),
            "beta": Attr("float", 0.75),
            "bias": Attr("float", 1.0),
        },
        doc="Local response normalization across channels.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 5, 3, 3)], {"size": 3}),
                Sample([rand(rng, 1, 6, 2, 2)], {"size": 5, "alpha": 0.1, "bias": 2.0}),
            ]
        ),
    )
)


# -- MaxUnpool -----------------------------------------------------------------------------------------


def _unpooled_shape(x, attrs):
    kernel, k = attrs["kernel_shape"], len(attrs["kernel_shape"])
    strides = attrs["strides"] or [1] * k
    pads = attrs["pads"] or [0] * (2 * k)
    return [(x[2 + i] - 1) * strides[i] - (pads[i] + pads[i + k]) + kernel[i] for i in range(k)]


def _max_unpool_infer(ins, attrs):
    x = ins[0].shape
    if ins[1].shape != x:
        raise GraphError(f"MaxUnpool: indices {ins[1].shape} must match the input {x}")
    shape = attrs["output_shape"] or list(x[:2]) + _unpooled_shape(x, attrs)
    return [TensorInfo(tuple(shape), ins[0].dtype)]


def _max_unpool(ins, attrs):
    x, idx = ins
    inferred = list(x.shape[:2]) + _unpooled_shape(x.shape, attrs)
    y = np.zeros(int(np.prod(inferred)), x.dtype)
    y[idx.reshape(-1).astype(np.int64)] = x.reshape(-1)  # indices address the inferred (unpadded) shape
    out = np.zeros(attrs["output_shape"] or inferred, x.dtype)
    out[tuple(slice(0, d) for d in inferred)] = y.reshape(inferred)
    return [out]


register(
    OpSchema(
        "MaxUnpool",
        infer=_max_unpool_infer,
        reference=_max_unpool,
        n_inputs=(2, 2),
        value_inputs={2: "output_shape"},
        attrs={
            "kernel_shape": Attr("ints"),
            "strides": Attr("ints", []),
            "pads": Attr("ints", []),
            "output_shape": Attr("ints", [], doc="from ONNX's third input; empty: inferred"),
        },
        doc="Scatter MaxPool's values back to where its indices say; zeros elsewhere.",
        samples=lambda rng: iter(
            [
                Sample(
                    [rand(rng, 1, 1, 2, 2), np.array([[[[5, 7], [13, 15]]]])],
                    {"kernel_shape": [2, 2], "strides": [2, 2]},
                )
            ]
        ),
    )
)


# -- Col2Im -------------------------------------------------------------------------------------------


def _col2im_geometry(shape, attrs):
    image, block = attrs["image_shape"], attrs["block_shape"]
    k = len(image)
    dil = attrs["dilations"] or [1] * k
    pads = attrs["pads"] or [0] * (2 * k)
    strides = attrs["strides"] or [1] * k
    counts = [(image[i] + pads[i] + pads[i + k] - dil[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(k)]
    nblock = int(np.prod(block))
    if len(shape) != 3 or shape[1] % nblock or shape[2] != int(np.prod(counts)):
        raise GraphError(f"Col2Im: input {shape} does not hold [N, C*{nblock}, {int(np.prod(counts))}] blocks")
    return image, block, dil, pads, strides, counts


def _col2im_infer(ins, attrs):
    image, block, *_ = _col2im_geometry(ins[0].shape, attrs)
    return [TensorInfo((ins[0].shape[0], ins[0].shape[1] // int(np.prod(block))) + tuple(image), ins[0].dtype)]


def _col2im(ins, attrs):
    x = ins[0]
    image, block, dil, pads, strides, counts = _col2im_geometry(x.shape, attrs)
    k = len(image)
    n, c = x.shape[0], x.shape[1] // int(np.prod(block))
    cols = x.astype(np.float64).reshape((n, c) + tuple(block) + tuple(counts))
    padded = np.zeros((n, c) + tuple(image[i] + pads[i] + pads[i + k] for i in range(k)))
    for offset in itertools.product(*[range(b) for b in block]):
        sl = tuple(slice(o * d, o * d + (m - 1) * s + 1, s) for o, d, m, s in zip(offset, dil, counts, strides))
        padded[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + offset]
    crop = tuple(slice(pads[i], pads[i] + image[i]) for i in range(k))
    return [padded[(slice(None), slice(None)) + crop].astype(x.dtype)]


register(
    OpSchema(
        "Col2Im",
        infer=_col2im_infer,
        reference=_col2im,
        value_inputs={1: "image_shape", 2: "block_shape"},
        attrs={
            "image_shape": Attr("ints", doc="ONNX's second input"),
            "block_shape": Attr("ints", doc="ONNX's third input"),
            "dilations": Attr("ints", []),
            "pads": Attr("ints", []),
            "strides": Attr("ints", []),
        },
        doc="Sum sliding blocks (columns) back into an image, the inverse of im2col.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 1, 5, 5)], {"image_shape": [5, 5], "block_shape": [1, 5]}),
                Sample(
                    [rand(rng, 2, 4, 9)],
                    {
                        "image_shape": [4, 4],
                        "block_shape": [2, 2],
                        "strides": [1, 1],
                        "pads": [0, 0, 0, 0],
                        "dilations": [1, 1],
                    },
                ),
            ]
        ),
    )
)


# -- RoiAlign -----------------------------------------------------------------------------------------


def _roi_infer(ins, attrs):
    x, rois, idx = ins
    if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 4 or idx.shape != (rois.shape[0],):
        raise GraphError(
            f"RoiAlign takes X [N,C,H,W], rois [R,4], batch_indices [R]; got {x.shape}, {rois.shape}, {idx.shape}"
        )
    return [TensorInfo((rois.shape[0], x.shape[1], attrs["output_height"], attrs["output_width"]), x.dtype)]


def _bilinear_taps(pos: np.ndarray, size: int):
    """Low/high indices and weights of each sample position, as RoiAlign clamps them."""
    pos = np.maximum(pos, 0)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= size - 1
    low = np.where(at_end, size - 1, low)
    high = np.where(at_end, size - 1, low + 1)
    pos = np.where(at_end, low, pos)
    frac = pos - low
    return low, high, 1 - frac, frac


def _roi_align(ins, attrs):
    x, rois, batch = ins
    oh, ow = attrs["output_height"], attrs["output_width"]
    half = attrs["coordinate_transformation_mode"] == "half_pixel"
    h, w = x.shape[2:]
    out = np.zeros((rois.shape[0], x.shape[1], oh, ow))
    for r, (roi, b) in enumerate(zip(rois.astype(np.float64), batch.astype(np.int64))):
        start = roi[:2] * attrs["spatial_scale"] - (0.5 if half else 0.0)
        size = roi[2:] * attrs["spatial_scale"] - (0.5 if half else 0.0) - start
        if not half:
            size = np.maximum(size, 1.0)
        bin_w, bin_h = size[0] / ow, size[1] / oh
        gh = attrs["sampling_ratio"] or int(np.ceil(size[1] / oh))
        gw = attrs["sampling_ratio"] or int(np.ceil(size[0] / ow))
        ys = start[1] + np.arange(oh)[:, None] * bin_h + (np.arange(gh)[None, :] + 0.5) * bin_h / gh  # oh, gh
        xs = start[0] + np.arange(ow)[:, None] * bin_w + (np.arange(gw)[None, :] + 0.5) * bin_w / gw  # ow, gw
        y0, y1, hy, ly = _bilinear_taps(ys, h)
        x0, x1, hx, lx = _bilinear_taps(xs, w)
        inside = ((ys >= -1.0) & (ys <= h))[:, :, None, None] & ((xs >= -1.0) & (xs <= w))[None, None]
        img = x[b].astype(np.float64)  # C, H, W
        corners = []
        for yi, wy in ((y0, hy), (y1, ly)):
            for xi, wx in ((x0, hx), (x1, lx)):
                v = img[:, yi[:, :, None, None], xi[None, None]]  # C, oh, gh, ow, gw
                corners.append(v * (wy[:, :, None, None] * wx[None, None]) * inside)
        if attrs["mode"] == "avg":
            out[r] = sum(corners).sum(axis=(2, 4)) / max(gh * gw, 1)
        else:  # ONNX's max: the largest weighted corner of every sample, then the largest sample
            out[r] = np.max(np.stack(corners), axis=0).max(axis=(2, 4))
    return [out.astype(x.dtype)]


register(
    OpSchema(
        "RoiAlign",
        infer=_roi_infer,
        reference=_roi_align,
        n_inputs=(3, 3),
        attrs={
            "coordinate_transformation_mode": Attr("str", "half_pixel", ("half_pixel", "output_half_pixel")),
            "mode": Attr("str", "avg", ("avg", "max")),
            "output_height": Attr("int", 1),
            "output_width": Attr("int", 1),
            "sampling_ratio": Attr("int", 0),
            "spatial_scale": Attr("float", 1.0),
        },
        doc="Average (or max) of bilinear samples in each bin of each region of interest.",
        samples=lambda rng: iter(
            [
                Sample(
                    [rand(rng, 2, 3, 8, 8), np.array([[0, 0, 5, 5], [1.5, 2, 7, 6.5]], np.float32), np.array([0, 1])],
                    {"output_height": 3, "output_width": 2},
                ),
                Sample(
                    [rand(rng, 1, 2, 6, 6), np.array([[1, 1, 4, 5]], np.float32), np.array([0])],
                    {
                        "mode": "max",
                        "sampling_ratio": 2,
                        "spatial_scale": 0.5,
                        "coordinate_transformation_mode": "output_half_pixel",
                    },
                ),
            ]
        ),
    )
)


# -- DeformConv ---------------------------------------------------------------------------------------


def _deform_geometry(ins, attrs):
    x, w, offset = ins[0].shape, ins[1].shape, ins[2].shape
    if len(x) != 4 or len(w) != 4:
        raise GraphError(f"DeformConv takes 2-D images: X {x}, W {w}")
    kh, kw = attrs["kernel_shape"] or w[2:]
    sh, sw = attrs["strides"] or [1, 1]
    dh, dw = attrs["dilations"] or [1, 1]
    pads = attrs["pads"] or [0, 0, 0, 0]
    oh = (x[2] + pads[0] + pads[2] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (x[3] + pads[1] + pads[3] - ((kw - 1) * dw + 1)) // sw + 1
    g, og = attrs["group"], attrs["offset_group"]
    if x[1] != w[1] * g or w[0] % g or x[1] % og or tuple(offset) != (x[0], og * kh * kw * 2, oh, ow):
        raise GraphError(f"DeformConv: X {x}, W {w}, offset {offset} do not agree (group {g}, offset_group {og})")
    return kh, kw, sh, sw, dh, dw, pads, oh, ow


def _deform_infer(ins, attrs):
    *_, oh, ow = _deform_geometry(ins, attrs)
    return [TensorInfo((ins[0].shape[0], ins[1].shape[0], oh, ow), ins[0].dtype)]


def _bilinear_zero(img: np.ndarray, py: np.ndarray, px: np.ndarray) -> np.ndarray:
    """img [C, H, W] sampled at (py, px) of any shape; corners outside the image count as 0."""
    h, w = img.shape[1:]
    y0, x0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
    out = np.zeros((img.shape[0],) + py.shape)
    for yi, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
        for xi, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
            ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
            v = img[:, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
            out += v * (wy * wx * ok)
    return out


def _deform_conv(ins, attrs):
    x, wt, offset = ins[0].astype(np.float64), ins[1].astype(np.float64), ins[2].astype(np.float64)
    bias = ins[3] if len(ins) > 3 and ins[3] is not None else None
    mask = ins[4] if len(ins) > 4 and ins[4] is not None else None
    kh, kw, sh, sw, dh, dw, pads, oh, ow = _deform_geometry(ins, attrs)
    n, c = x.shape[:2]
    g, og = attrs["group"], attrs["offset_group"]
    offset = offset.reshape(n, og, kh, kw, 2, oh, ow)
    mask = np.ones((n, og, kh, kw, oh, ow)) if mask is None else mask.astype(np.float64).reshape(n, og, kh, kw, oh, ow)
    base_y = (-pads[0] + sh * np.arange(oh))[None, None, :, None] + (dh * np.arange(kh))[:, None, None, None]
    base_x = (-pads[1] + sw * np.arange(ow))[None, None, None, :] + (dw * np.arange(kw))[None, :, None, None]
    cpg = c // og
    out = np.zeros((n, wt.shape[0], oh, ow))
    for b in range(n):
        cols = np.concatenate(
            [
                _bilinear_zero(
                    x[b, i * cpg : (i + 1) * cpg], base_y + offset[b, i, :, :, 0], base_x + offset[b, i, :, :, 1]
                )
                * mask[b, i]
                for i in range(og)
            ]
        )  # C, kh, kw, oh, ow
        ci, co = c // g, wt.shape[0] // g
        for gi in range(g):
            out[b, gi * co : (gi + 1) * co] = np.einsum(
                "cijhw,ocij->ohw", cols[gi * ci : (gi + 1) * ci], wt[gi * co : (gi + 1) * co]
            )
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return [out.astype(ins[0].dtype)]


register(
    OpSchema(
        "DeformConv",
        infer=_deform_infer,
        reference=_deform_conv,
        n_inputs=(3, 5),
        attrs={
            "dilations": Attr("ints", []),
            "group": Attr("int", 1),
            "kernel_shape": Attr("ints", []),
            "offset_group": Attr("int", 1),
            "pads": Attr("ints", []),
            "strides": Attr("ints", []),
        },
        doc="Deformable convolution: each kernel tap samples at its own learned offset (bilinear), times a mask.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3), rand(rng, 1, 18, 3, 3)]),
                Sample(
                    [
                        rand(rng, 1, 4, 4, 4),
                        rand(rng, 2, 2, 2, 2),
                        rand(rng, 1, 16, 5, 5),
                        rand(rng, 2),
                        rand(rng, 1, 8, 5, 5, low=0, high=1),
                    ],
                    {"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1]},
                ),
            ]
        ),
    )
)

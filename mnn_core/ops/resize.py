"""Resize of tensors of any rank, as ONNX defines it: nearest, linear and cubic sampling (antialiased
when downsampling, if asked), every coordinate mode, sizes or scales on any axes, aspect-ratio policies.

Each resized axis is one separable pass: an output position reads `taps` input positions with weights
(`axis_taps`), the table the backends build too; axes go in increasing order, as ONNX's reference does.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ..graph.symbolic import UNKNOWN, Sym, is_sym
from ._util import info_like, rand
from .schema import Attr, OpSchema, Sample, register

COORDINATE_MODES = (
    "half_pixel",
    "asymmetric",
    "align_corners",
    "pytorch_half_pixel",
    "half_pixel_symmetric",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")


def resize_geometry(shape, attrs) -> tuple[list, list, list]:
    """(output shape, scale per axis, (roi start, roi end) per axis), over all axes of `shape`.

    `scales`, `sizes` (exactly one given) and `roi` (start per axis, then end per axis) name the axes
    in `axes`; without `axes`, every axis, or the axes after N and C when they hold rank - 2 values.
    An axis left alone keeps its size (its entry of `shape` itself) and scale 1.
    """
    rank = len(shape)
    scales, sizes = attrs["scales"], attrs["sizes"]
    if bool(scales) == bool(sizes):
        raise GraphError("Resize needs exactly one of `scales` and `sizes`")
    given = scales or sizes
    axes = _axes(attrs.get("axes") or [], rank, len(given), "scales" if scales else "sizes")
    out, scale = list(shape), [1.0] * rank
    if scales:
        if min(scales) <= 0:
            raise GraphError(f"Resize: scales {scales} must be positive")
        for a, s in zip(axes, given):
            out[a], scale[a] = (shape[a], 1.0) if s == 1.0 else (_scaled(shape[a], s), float(s))
    else:
        _sized(shape, axes, given, attrs.get("keep_aspect_ratio_policy", "stretch"), out, scale)
    return out, scale, _roi(attrs, axes, rank)


def _axes(axes, rank: int, n: int, what: str) -> list[int]:
    if not axes:
        if n not in (rank, rank - 2):
            raise GraphError(
                f"Resize: {what} has {n} values; the input has rank {rank} (give {rank}, or "
                f"{rank - 2} for the axes after N and C, or name them in `axes`)"
            )
        return list(range(rank - n, rank))
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise GraphError(f"Resize: axes {axes} must be distinct axes of a rank-{rank} input")
    if len(axes) != n:
        raise GraphError(f"Resize: {what} has {n} values for the {len(axes)} axes {axes}")
    return [a % rank for a in axes]


def _sized(shape, axes, sizes, policy: str, out: list, scale: list) -> None:
    if any(not is_sym(o) and o < 0 for o in sizes):
        raise GraphError(f"Resize: sizes {sizes} must not be negative")
    for a, o in zip(axes, sizes):
        d = shape[a]
        if not is_sym(d) and d == 0 and o != 0:
            raise GraphError(f"Resize: cannot resize the empty axis {a} of {shape} to {o}")
        if is_sym(d) or is_sym(o) or o != d:  # (a symbolic size stays: its scale is known at resize)
            out[a], scale[a] = o, None if is_sym(d) or is_sym(o) else o / d
    if policy == "stretch":
        return
    if any(is_sym(shape[a]) for a in axes):
        raise GraphError(f"Resize: keep_aspect_ratio_policy={policy} needs the sizes of axes {axes}, got {shape}")
    ratios = [o / shape[a] for a, o in zip(axes, sizes) if shape[a]]
    s = (min if policy == "not_larger" else max)(ratios) if ratios else 1.0
    for a in axes:  # one scale for all, each size rounded half up
        out[a], scale[a] = int(s * shape[a] + 0.5), s


def _roi(attrs, axes, rank: int) -> list:
    roi = [(0.0, 1.0)] * rank
    given = attrs.get("roi") or []
    if attrs["coordinate_transformation_mode"] != "tf_crop_and_resize" or not given:
        return roi
    if len(given) not in (2 * len(axes), 2 * rank):
        raise GraphError(f"Resize: roi {given} must hold a start and an end per resized axis ({2 * len(axes)} values)")
    named = axes if len(given) == 2 * len(axes) else range(rank)
    half = len(given) // 2
    for i, a in enumerate(named):
        roi[a] = (float(given[i]), float(given[half + i]))
    return roi


def resize_plan(shape, attrs) -> tuple[list, list]:
    """The output size and the scale of H and W of an NCHW resize that keeps N and C (the form the
    GPU kernels take: see resize_2d_supports)."""
    if len(shape) != 4:
        raise GraphError(f"Resize takes NCHW input (4-D) here, got shape {shape}")
    out, scale, _ = resize_geometry(shape, attrs)
    if not (_same(out[0], shape[0]) and _same(out[1], shape[1])):
        raise GraphError(f"Resize resizes H and W only here; {out} changes N or C of {shape}")
    return out[2:], scale[2:]


def _same(a, b) -> bool:
    try:
        return a is b or is_sym(a) == is_sym(b) and bool(a == b)
    except TypeError:  # symbols that cannot be compared before resize
        return False


def resize_2d_supports(node, ins):
    """True when the Resize is the 2-D one the GPU kernels run (NCHW, N and C kept, nearest or linear
    without antialias, a coordinate mode of the output position alone), else the reason."""
    a = node.attrs
    if len(ins[0].shape) != 4:
        return "only NCHW (4-D) input"
    mode = a.get("mode", "nearest")
    if mode not in ("nearest", "linear") or a.get("antialias"):
        return f"mode {mode}{' with antialias' if a.get('antialias') else ''}"
    if a.get("coordinate_transformation_mode") == "tf_crop_and_resize":
        return "coordinate mode tf_crop_and_resize (roi)"
    try:
        out, _, _ = resize_geometry(ins[0].shape, a)
    except (GraphError, KeyError):  # an invalid Resize fails at shape inference, not here
        return True
    if not (_same(out[0], ins[0].shape[0]) and _same(out[1], ins[0].shape[1])):
        return "a resize of N or C"
    return True


def _scaled(d, s: float):
    """floor(d * s); for a symbolic size, exact where s is whole (2x upsampling), else unknown."""
    if not is_sym(d):
        return int(math.floor(d * s))
    return d * int(s) if float(s).is_integer() else Sym(UNKNOWN)


def _infer(ins, attrs):
    out, _, _ = resize_geometry(ins[0].shape, attrs)
    if ins[0].dtype not in ("float32", "float16", "float64") and attrs["mode"] != "nearest":
        raise GraphError(f"Resize: {attrs['mode']} mode takes float input, got {ins[0].dtype}")
    if attrs.get("antialias") and attrs["mode"] == "nearest":
        raise GraphError("Resize: antialias takes mode linear or cubic")
    return [info_like(ins[0], tuple(out))]


def source_coordinate(out_size: int, in_size: int, scale: float, mode: str, roi=(0.0, 1.0)) -> np.ndarray:
    """Where each output position samples the input, in input pixel units. The resized length is
    in_size * scale, unfloored (ONNX's definition)."""
    x = np.arange(out_size, dtype=np.float64)
    length = in_size * scale
    if mode == "asymmetric":
        return x / scale
    if mode == "align_corners":
        return np.zeros_like(x) if out_size == 1 or length == 1 else x * (in_size - 1) / (length - 1)
    if mode == "tf_crop_and_resize":
        start, end = roi
        if length == 1:
            return np.full_like(x, 0.5 * (start + end) * (in_size - 1))
        return start * (in_size - 1) + x * (end - start) * (in_size - 1) / (length - 1)
    if mode == "pytorch_half_pixel" and out_size == 1:
        return np.zeros_like(x)
    if mode == "half_pixel_symmetric":  # the center of the output maps to the center of the input
        offset = in_size / 2 * (1 - out_size / length)
        return offset + (x + 0.5) / scale - 0.5
    return (x + 0.5) / scale - 0.5  # half_pixel and pytorch_half_pixel


def _nearest_index(coord: np.ndarray, in_size: int, mode: str) -> np.ndarray:
    if mode == "floor":
        idx = np.floor(coord)
    elif mode == "ceil":
        idx = np.ceil(coord)
    else:  # round to nearest; exact halves go the preferred way
        half = coord - np.floor(coord) == 0.5
        idx = np.where(half, np.floor(coord) if mode == "round_prefer_floor" else np.ceil(coord), np.round(coord))
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _cubic(d: np.ndarray, a: float) -> np.ndarray:
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def axis_taps(out_size: int, in_size: int, scale: float, attrs, roi=(0.0, 1.0)):
    """The sampling table of one axis: (index (out, taps) int64 within [0, in_size), weight (out, taps)
    float64, outside (out,) bool or None). Output j is sum_k weight[j, k] * x[index[j, k]], or
    extrapolation_value where outside[j] (tf_crop_and_resize reading beyond the input).

    Linear and cubic filters span 1 and 2 input pixels each side; antialias widens them by 1 / scale
    when downsampling (and normalizes the weights). Taps past an edge read the edge pixel, or weigh
    nothing with exclude_outside."""
    mode = attrs["mode"]
    x = source_coordinate(out_size, in_size, scale, attrs["coordinate_transformation_mode"], roi)
    outside = None
    if attrs["coordinate_transformation_mode"] == "tf_crop_and_resize":
        outside = (x < 0) | (x > in_size - 1)
    if mode == "nearest":
        idx = _nearest_index(x, in_size, attrs["nearest_mode"])[:, None]
        return idx, np.ones(idx.shape), outside
    radius = 1 if mode == "linear" else 2
    s = min(scale, 1.0) if attrs.get("antialias") else 1.0
    n = -2 * math.floor(-radius / s)
    fl = np.floor(x)
    start = np.where(x == fl, x - n // 2, fl - n // 2 + 1)  # the n pixels nearest x, ties to the lower
    taps = start[:, None] + np.arange(n)
    d = (taps - x[:, None]) * s
    w = np.clip(1 - np.abs(d), 0, 1) if mode == "linear" else _cubic(d, attrs.get("cubic_coeff_a", -0.75))
    if attrs.get("antialias"):
        w = w / w.sum(axis=1, keepdims=True)
    if attrs.get("exclude_outside"):
        w = np.where((taps < 0) | (taps > in_size - 1), 0.0, w)
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, in_size - 1).astype(np.int64), w, outside


def axis_is_identity(out_size, in_size, scale, roi) -> bool:
    """Whether a pass over this axis would copy it (skipped, as ONNX's reference skips it)."""
    return out_size == in_size and scale == 1.0 and tuple(roi) == (0.0, 1.0)


def _reference(ins, attrs):
    x = ins[0]
    out, scales, roi = resize_geometry(x.shape, attrs)
    y = x if attrs["mode"] == "nearest" else x.astype(np.float64)
    for axis in range(x.ndim):
        if axis_is_identity(out[axis], x.shape[axis], scales[axis], roi[axis]) or 0 in y.shape:
            continue
        idx, w, outside = axis_taps(out[axis], x.shape[axis], scales[axis], attrs, roi[axis])
        view = (1,) * axis + (-1,) + (1,) * (x.ndim - axis - 1)
        if attrs["mode"] == "nearest":
            y = np.take(y, idx[:, 0], axis=axis)
        else:
            y = sum(np.take(y, idx[:, k], axis=axis) * w[:, k].reshape(view) for k in range(idx.shape[1]))
        if outside is not None and outside.any():
            y = np.where(outside.reshape(view), np.asarray(attrs["extrapolation_value"]).astype(y.dtype), y)
    if 0 in y.shape:
        y = np.zeros(out, x.dtype)
    return [np.ascontiguousarray(y.astype(x.dtype))]


def _samples(rng):
    cases = [
        ((1, 2, 4, 4), {"scales": [1.0, 1.0, 2.0, 2.0]}),
        ((1, 3, 5, 7), {"scales": [1.0, 1.0, 1.5, 0.5], "mode": "linear"}),
        ((2, 2, 6, 6), {"sizes": [2, 2, 9, 4], "mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        (
            (1, 1, 5, 3),
            {"sizes": [1, 1, 8, 1], "mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
        ),
        (
            (1, 2, 4, 6),
            {"scales": [1.0, 1.0, 2.0, 3.0], "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
        ),
        ((1, 2, 8, 8), {"scales": [1.0, 1.0, 0.5, 0.75], "nearest_mode": "ceil"}),
        (
            (1, 2, 3, 4),
            {
                "scales": [1.0, 1.0, 2.0, 2.0],
                "coordinate_transformation_mode": "asymmetric",
                "nearest_mode": "round_prefer_ceil",
            },
        ),
        ((1, 2, 3, 4), {"sizes": [1, 2, 6, 8], "coordinate_transformation_mode": "asymmetric"}),
        ((2, 3, 7, 5), {"sizes": [2, 3, 3, 10], "mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
        ((1, 4, 6, 10), {"scales": [1.0, 1.0, 1.0, 0.5], "mode": "linear"}),
        ((0, 3, 4, 4), {"scales": [1.0, 1.0, 2.0, 2.0], "mode": "linear"}),
        ((2, 2, 5, 5), {"sizes": [7, 3], "mode": "linear"}),
        # the modes past nearest and bilinear of NCHW (GPU kernels decline them: resize_2d_supports)
        ((1, 2, 5, 7), {"scales": [1.0, 1.0, 1.6, 0.6], "mode": "cubic"}),
        ((1, 1, 6, 9), {"sizes": [1, 1, 4, 13], "mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}),
        ((1, 2, 9, 11), {"sizes": [1, 2, 4, 5], "mode": "linear", "antialias": 1}),
        ((1, 2, 9, 11), {"scales": [1.0, 1.0, 0.45, 0.7], "mode": "cubic", "antialias": 1}),
        (
            (1, 1, 7, 6),
            {
                "sizes": [1, 1, 5, 9],
                "mode": "linear",
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "roi": [0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2],
                "extrapolation_value": 3.0,
            },
        ),
        (
            (1, 2, 5, 8),
            {
                "scales": [1.0, 1.0, 1.7, 0.6],
                "mode": "linear",
                "coordinate_transformation_mode": "half_pixel_symmetric",
            },
        ),
        ((2, 3, 5, 6), {"sizes": [7, 7], "axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}),
        ((2, 3, 5, 6), {"sizes": [4, 9], "axes": [3, 2], "mode": "linear", "keep_aspect_ratio_policy": "not_smaller"}),
        ((3, 10), {"scales": [1.0, 0.55], "mode": "cubic"}),
        (
            (1, 1, 6, 7),
            {
                "sizes": [4, 5],
                "axes": [2, 3],
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "roi": [0.3, -0.2, 1.1, 0.8],
                "extrapolation_value": -2.0,
            },
        ),
        ((1, 2, 12, 5), {"scales": [1.0, 1.0, 0.3, 1.8], "mode": "cubic", "antialias": 1, "exclude_outside": 1}),
        ((2, 3, 4, 5, 6), {"scales": [1.5, 0.5, 1.25], "axes": [2, 3, 4], "mode": "linear"}),
        ((2, 6, 5), {"sizes": [4, 3, 5], "mode": "nearest", "coordinate_transformation_mode": "align_corners"}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
    x = rng.integers(0, 255, size=(1, 1, 3, 3)).astype("uint8")
    yield Sample([x], {"scales": [1.0, 1.0, 2.0, 2.0]}, label="uint8 nearest")


register(
    OpSchema(
        "Resize",
        value_inputs={1: "roi", 2: "scales", 3: "sizes"},
        infer=_infer,
        reference=_reference,
        attrs={
            "mode": Attr("str", "nearest", ("nearest", "linear", "cubic")),
            "coordinate_transformation_mode": Attr("str", "half_pixel", COORDINATE_MODES),
            "nearest_mode": Attr("str", "round_prefer_floor", NEAREST_MODES),
            "cubic_coeff_a": Attr("float", -0.75),
            "exclude_outside": Attr("int", 0, doc="taps past the edge weigh nothing (the rest renormalized)"),
            "antialias": Attr("int", 0, doc="linear and cubic: widen the filter by 1 / scale when downsampling"),
            "extrapolation_value": Attr("float", 0.0, doc="tf_crop_and_resize: the value beyond the input"),
            "keep_aspect_ratio_policy": Attr("str", "stretch", ASPECT_POLICIES),
            "axes": Attr("ints", [], doc="the axes scales, sizes and roi name; empty: all"),
            "roi": Attr("floats", [], doc="tf_crop_and_resize: starts then ends, per axis, in [0, 1] of the input"),
            "scales": Attr("floats", [], doc="per axis (all, those after N and C, or axes); out = floor(in * scale)"),
            "sizes": Attr("ints", [], doc="output size per axis (as scales)"),
        },
        flops=lambda ins, outs, attrs: {"nearest": 1.0, "linear": 4.0, "cubic": 16.0}[attrs["mode"]] * outs[0].size,
        samples=_samples,
        doc="Resize any axes by nearest, linear or cubic sampling (ONNX's Resize).",
    )
)

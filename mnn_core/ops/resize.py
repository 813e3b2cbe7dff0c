"""Resize of NCHW images (spatial axes only): nearest and bilinear, ONNX coordinate modes."""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ..graph.symbolic import UNKNOWN, Sym, is_sym
from ._util import info_like, rand
from .schema import Attr, OpSchema, Sample, register

COORDINATE_MODES = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_plan(shape, attrs) -> tuple[list, list]:
    """The output size and the scale of each spatial axis (H, W).

    `scales` and `sizes` hold 4 values (N, C, H, W as in ONNX; N and C must stay)
    or 2 (H and W only, which also works when N is not known until resize).
    """
    if len(shape) != 4:
        raise GraphError(f"Resize takes NCHW input (4-D), got shape {shape}")
    scales, sizes = attrs["scales"], attrs["sizes"]
    if bool(scales) == bool(sizes):
        raise GraphError("Resize needs exactly one of `scales` and `sizes`")
    given = scales or sizes
    if len(given) not in (2, 4):
        raise GraphError(f"Resize: {'scales' if scales else 'sizes'} {given} must have 4 values (NCHW) or 2 (HW)")
    if len(given) == 4:
        keep = [1.0, 1.0] if scales else list(shape[:2])
        if list(given[:2]) != keep:
            raise GraphError(f"Resize resizes H and W only; {'scales' if scales else 'sizes'} {given} changes N or C")
        given = given[2:]
    if scales:
        if min(scales) <= 0:
            raise GraphError(f"Resize: scales {scales} must be positive")
        out = [_scaled(d, s) for d, s in zip(shape[2:], given)]
        return out, list(given)
    if min(given) < 1:
        raise GraphError(f"Resize: sizes {sizes} must be at least 1")
    if 0 in shape[2:]:
        raise GraphError(f"Resize: cannot resize the empty spatial size of {shape}")
    return list(given), [None if is_sym(o) or is_sym(d) else o / d for o, d in zip(given, shape[2:])]


def _scaled(d, s: float):
    """floor(d * s); for a symbolic size, exact where s is whole (2x upsampling), else unknown."""
    if not is_sym(d):
        return int(math.floor(d * s))
    return d * int(s) if float(s).is_integer() else Sym(UNKNOWN)


def _infer(ins, attrs):
    out, _ = resize_plan(ins[0].shape, attrs)
    if ins[0].dtype not in ("float32", "float16") and attrs["mode"] == "linear":
        raise GraphError(f"Resize: linear mode takes float input, got {ins[0].dtype}")
    return [info_like(ins[0], tuple(ins[0].shape[:2]) + tuple(out))]


def source_coordinate(out_size: int, in_size: int, scale: float, mode: str) -> np.ndarray:
    """Where each output position samples the input, in input pixel units."""
    x = np.arange(out_size, dtype=np.float64)
    if mode == "asymmetric":
        return x / scale
    if mode == "align_corners":  # the resized length is in_size * scale, unfloored (ONNX's definition)
        length = in_size * scale
        return np.zeros_like(x) if out_size == 1 or length == 1 else x * (in_size - 1) / (length - 1)
    if mode == "pytorch_half_pixel" and out_size == 1:
        return np.zeros_like(x)
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


def _linear_weights(coord: np.ndarray, in_size: int):
    """Two source indices and their weights per output position (clamped at the edges)."""
    coord = np.clip(coord, 0, in_size - 1)
    lo = np.floor(coord).astype(np.int64)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = coord - lo
    return lo, hi, 1.0 - frac, frac


def _reference(ins, attrs):
    x = ins[0]
    out, scales = resize_plan(x.shape, attrs)
    mode, coord_mode = attrs["mode"], attrs["coordinate_transformation_mode"]
    y = x if mode == "nearest" else x.astype(np.float64)
    for axis, (o, s) in enumerate(zip(out, scales), start=2):
        d = x.shape[axis]
        if o == d and s == 1.0:
            continue  # an unscaled axis samples itself, in every coordinate mode
        coord = source_coordinate(o, d, s, coord_mode)
        if mode == "nearest":
            y = np.take(y, _nearest_index(coord, d, attrs["nearest_mode"]), axis=axis)
        else:
            lo, hi, wlo, whi = _linear_weights(coord, d)
            view = (1,) * axis + (-1,) + (1,) * (3 - axis)
            y = np.take(y, lo, axis=axis) * wlo.reshape(view) + np.take(y, hi, axis=axis) * whi.reshape(view)
    return [np.ascontiguousarray(y.astype(x.dtype))]


def _samples(rng):
    cases = [
        ((1, 2, 4, 4), {"scales": [1.0, 1.0, 2.0, 2.0]}),
        ((1, 3, 5, 7), {"scales": [1.0, 1.0, 1.5, 0.5], "mode": "linear"}),
        ((2, 2, 6, 6), {"sizes": [2, 2, 9, 4], "mode": "linear", "coordinate_transformation_mode": "align_corners"}),
        ((1, 1, 5, 3), {"sizes": [1, 1, 8, 1], "mode": "linear",
                        "coordinate_transformation_mode": "pytorch_half_pixel"}),
        ((1, 2, 4, 6), {"scales": [1.0, 1.0, 2.0, 3.0], "coordinate_transformation_mode": "asymmetric",
                        "nearest_mode": "floor"}),
        ((1, 2, 8, 8), {"scales": [1.0, 1.0, 0.5, 0.75], "nearest_mode": "ceil"}),
        ((1, 2, 3, 4), {"scales": [1.0, 1.0, 2.0, 2.0], "coordinate_transformation_mode": "asymmetric",
                        "nearest_mode": "round_prefer_ceil"}),
        ((1, 2, 3, 4), {"sizes": [1, 2, 6, 8], "coordinate_transformation_mode": "asymmetric"}),
        ((2, 3, 7, 5), {"sizes": [2, 3, 3, 10], "mode": "linear", "coordinate_transformation_mode": "asymmetric"}),
        ((1, 4, 6, 10), {"scales": [1.0, 1.0, 1.0, 0.5], "mode": "linear"}),
        ((0, 3, 4, 4), {"scales": [1.0, 1.0, 2.0, 2.0], "mode": "linear"}),
        ((2, 2, 5, 5), {"sizes": [7, 3], "mode": "linear"}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")
    x = rng.integers(0, 255, size=(1, 1, 3, 3)).astype("uint8")
    yield Sample([x], {"scales": [1.0, 1.0, 2.0, 2.0]}, label="uint8 nearest")


register(
    OpSchema(
        "Resize",
        value_inputs={2: "scales", 3: "sizes"},  # (input 1, roi, only tf_crop_and_resize reads)
        infer=_infer,
        reference=_reference,
        attrs={
            "mode": Attr("str", "nearest", ("nearest", "linear")),
            "coordinate_transformation_mode": Attr("str", "half_pixel", COORDINATE_MODES),
            "nearest_mode": Attr("str", "round_prefer_floor", NEAREST_MODES),
            "scales": Attr("floats", [], doc="per axis, NCHW (4) or HW (2); output = floor(in * scale)"),
            "sizes": Attr("ints", [], doc="output size per axis, NCHW (4) or HW (2)"),
        },
        flops=lambda ins, outs, attrs: (4.0 if attrs["mode"] == "linear" else 1.0) * outs[0].size,
        samples=_samples,
        doc="Resize H and W of NCHW input by nearest or bilinear sampling.",
    )
)

"""Spatial ops on x86 (_spatial.pyx, csrc/spatial/): ConvTranspose and 3-D Conv on the packed GEMM,
and Resize.

ConvTranspose (1 to 3 spatial axes, every attribute of the schema) runs per image and group as
one GEMM, W^T (M/group * taps, C/group) @ X (C/group, pixels), into a column buffer whose rows are
contiguous over the input pixels, then adds each tap's row at its strided, dilated place of the
output (col2im) over the bias, and applies the fused activation. 3-D Conv (ops_conv.py hands it
over) gathers the columns (im2col) and runs the GEMM with bias and activation in its epilogue.
Resize samples from per-axis tables computed here by the schema's rules: NCHW nearest (any dtype)
and bilinear (float32) from per-row and per-column tables; the rest (cubic, antialias,
tf_crop_and_resize, any rank and axes, float32) as one separable pass per resized axis over the
schema's own tap tables (mnn_core.ops.resize.axis_taps).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np

from mnn_core.backend.kit.geometry import CONV_SPATIAL, conv_geometry, conv_transpose_geometry
from mnn_core.graph.ir import DTYPES
from mnn_core.ops.resize import (
    axis_is_identity,
    axis_taps,
    resize_2d_supports,
    resize_geometry,
    resize_plan,
    source_coordinate,
)

from . import _spatial
from ._common import fused_activation, kernel, static_shape


def _window(sizes_in, sizes_out, kernel_shape, strides, dilations, pads_begin) -> dict:
    """The 3-D window _spatial takes: 1 and 2 spatial axes padded in front with unit axes."""
    lead = 3 - len(sizes_in)

    def fill(vals, unit):
        return [unit] * lead + [int(v) for v in vals]

    return {
        "in": fill(sizes_in, 1),
        "out": fill(sizes_out, 1),
        "k": fill(kernel_shape, 1),
        "s": fill(strides, 1),
        "d": fill(dilations, 1),
        "p": fill(pads_begin, 0),
    }


def _weight_and_bias(node, constants) -> tuple:
    """(constant weight or None, constant bias or None, the input index of a bias read at run or -1)."""
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    bias = constants.get(node.inputs[2]) if has_bias else None
    return constants.get(node.inputs[1]), bias, 2 if has_bias and bias is None else -1


def _spatial_supports(node, ins):
    if len(ins[0].shape) - 2 not in CONV_SPATIAL or len(ins[1].shape) != len(ins[0].shape):
        return "only 1 to 3 spatial axes"
    if any(isinstance(d, int) and d == 0 for d in ins[0].shape[2:]):
        return "an empty spatial axis"
    return True


@kernel("ConvTranspose", supports=_spatial_supports, efficiency=0.5)
def prepare_conv_transpose(node, ins, outs, constants, ctx, isa):
    x, w = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_transpose_geometry(x, w, node.attrs, CONV_SPATIAL)
    k = len(x) - 2
    act, act_alpha, act_beta = fused_activation(node.attrs)
    # the output is the full one cropped by the begin pads: output place = i*s + t*d - pad_begin
    p = dict(
        _window(x[2:], geo["out"][2:], geo["kernel"], geo["strides"], geo["dilations"], geo["pads"][:k]),
        C=x[1],
        M=geo["out"][1],
        group=geo["group"],
        act=act,
        act_alpha=act_alpha,
        act_beta=act_beta,
    )
    weight, bias, bias_input = _weight_and_bias(node, constants)
    return _spatial.deconv(isa, ctx.threads, p, weight, bias, bias_input)


def prepare_conv3d(node, ins, outs, constants, ctx, isa):
    """Conv over 3 spatial axes (ops_conv.py's prepare hands 5-D convolutions here)."""
    x, w = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x, w, node.attrs, CONV_SPATIAL)
    act, act_alpha, act_beta = fused_activation(node.attrs)
    p = dict(
        _window(x[2:], geo["out"][2:], geo["kernel"], geo["strides"], geo["dilations"], geo["pads"][:3]),
        C=x[1],
        O=w[0],
        group=geo["group"],
        act=act,
        act_alpha=act_alpha,
        act_beta=act_beta,
    )
    weight, bias, bias_input = _weight_and_bias(node, constants)
    return _spatial.conv3d(isa, ctx.threads, p, weight, bias, bias_input)


def _nearest(coord: np.ndarray, size: int, rounding: str) -> np.ndarray:
    """The input index of each source coordinate under nearest_mode `rounding`."""
    if rounding == "floor":
        idx = np.floor(coord)
    elif rounding == "ceil":
        idx = np.ceil(coord)
    else:  # to nearest, exact halves the preferred way
        half = coord - np.floor(coord) == 0.5
        idx = np.where(half, np.floor(coord) if rounding == "round_prefer_floor" else np.ceil(coord), np.round(coord))
    return np.clip(idx, 0, size - 1).astype(np.int64)


def _axis_table(out: int, size: int, scale, attrs) -> tuple:
    """(lo, hi, weight of hi) of one axis: the input indices each output index reads. An unscaled axis
    reads itself in every coordinate mode (as the schema's reference)."""
    if out == size and scale == 1.0:
        idx = np.arange(out, dtype=np.int64)
        return idx, idx, np.zeros(out, np.float32)
    coord = source_coordinate(out, size, scale, attrs["coordinate_transformation_mode"])
    if attrs["mode"] == "nearest":
        idx = _nearest(coord, size, attrs["nearest_mode"])
        return idx, idx, np.zeros(out, np.float32)
    coord = np.clip(coord, 0, size - 1)
    lo = np.floor(coord).astype(np.int64)
    return lo, np.minimum(lo + 1, size - 1), (coord - lo).astype(np.float32)


def _repeat(col: np.ndarray, size: int) -> int:
    """f where the nearest column table reads each input column f times in order (whole-factor
    upsampling: 2x in FPN and YOLO necks), which C runs without the table; else 0."""
    f = len(col) // size
    return f if f > 1 and len(col) == f * size and np.array_equal(col, np.arange(len(col)) // f) else 0


def _plain_2d(node, ins) -> bool:
    """Whether the NCHW kernel (nearest, bilinear: two taps per axis) takes this Resize."""
    return resize_2d_supports(node, ins) is True


def _resize_supports(node, ins):
    if _plain_2d(node, ins):
        return True if node.attrs["mode"] == "nearest" or ins[0].dtype == "float32" else "linear mode of float32 only"
    return True if ins[0].dtype == "float32" else "cubic, antialias, roi or N-D resizes of float32 only"


@kernel("Resize", dtypes=DTYPES, supports=_resize_supports, efficiency=0.3)
def prepare_resize(node, ins, outs, constants, ctx, isa):
    if not _plain_2d(node, ins):
        return _spatial.resize_nd(
            isa, ctx.threads, f"x86.Resize.{node.attrs['mode']}", _passes(node, ins), node.attrs["extrapolation_value"]
        )
    x = static_shape(ins[0])
    n, c, h, w = x
    (oh, ow), (sh, sw) = resize_plan(x, node.attrs)
    rows, cols = _axis_table(oh, h, sh, node.attrs), _axis_table(ow, w, sw, node.attrs)
    linear = node.attrs["mode"] == "linear"
    p = dict(linear=int(linear), planes=n * c, H=h, W=w, OH=oh, OW=ow, repeat=0 if linear else _repeat(cols[0], w))
    return _spatial.resize(isa, ctx.threads, f"x86.Resize.{node.attrs['mode']}", p, rows, cols)


def _passes(node, ins) -> list:
    """One pass per resized axis: the tensor before it seen as (outer, in, inner) and the axis' tap
    table, in the cheapest order (_pass_order). A resize of no axis is one pass that copies."""
    shape = list(static_shape(ins[0]))
    out, scales, roi = resize_geometry(shape, node.attrs)
    tables = {
        a: axis_taps(out[a], shape[a], scales[a], node.attrs, roi[a])
        for a in range(len(shape))
        if not axis_is_identity(out[a], shape[a], scales[a], roi[a])
    }
    if not tables:
        last = len(shape) - 1
        tables = {last: (np.arange(out[last])[:, None], np.ones((out[last], 1)), None)}
    passes = []
    for a in _pass_order(shape, out, tables):
        idx, w, outside = tables[a]
        passes.append(
            dict(
                outer=int(np.prod(shape[:a])),
                inner=int(np.prod(shape[a + 1 :])),
                idx=idx,
                w=w,
                outside=outside if outside is not None and outside.any() else None,
                out=out[a],
                **{"in": shape[a]},
            )
        )
        shape[a] = out[a]
    return passes


def _pass_order(shape, out, tables) -> tuple:
    """The order of the passes that does the least work: the passes are linear, so any order gives the
    reference's result up to rounding. A pass costs its output elements times its taps, a gather along
    the last axis several times a row blend (which vectorizes); shrinking axes go first, growing last."""

    def cost(order):
        cur, total = list(shape), 0
        for a in order:
            cur[a] = out[a]
            total += int(np.prod(cur)) * tables[a][0].shape[1] * (4 if a == len(shape) - 1 else 1)
        return total

    axes = sorted(tables)
    return min(itertools.permutations(axes), key=cost) if len(axes) <= 4 else tuple(axes)


def lift_1d(node, ins, outs, constants) -> tuple:
    """A 1-D Conv or pooling as the 2-D one over a plane of height 1, which the 2-D kernels run on the
    same memory: (node, ins, outs, constants) with unit kernel, stride and dilation and no padding
    along the new axis, and (N, C, 1, L) shapes."""
    attrs = dict(node.attrs)
    for name, unit in (("kernel_shape", 1), ("strides", 1), ("dilations", 1)):
        if attrs.get(name):
            attrs[name] = [unit, *attrs[name]]
    if attrs.get("pads"):
        attrs["pads"] = [0, attrs["pads"][0], 0, attrs["pads"][1]]

    def plane(info):
        return None if info is None else replace(info, shape=(*info.shape[:2], 1, *info.shape[2:]))

    weight = node.inputs[1] if node.op == "Conv" else None
    ins = [plane(ins[0]), *(plane(i) if n == weight else i for i, n in zip(ins[1:], node.inputs[1:]))]
    if weight in constants:
        w = constants[weight]
        constants = {**constants, weight: w.reshape(w.shape[:2] + (1,) + w.shape[2:])}
    return replace(node, attrs=attrs), ins, [plane(o) for o in outs], constants

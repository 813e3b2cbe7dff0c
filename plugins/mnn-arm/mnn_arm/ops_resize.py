"""Resize on Arm (csrc/resize.c, float32): any rank, nearest / linear / cubic, every coordinate mode,
antialias and exclude_outside, through the sampling tables of mnn_core.ops.resize (axis_taps): one
separable pass per resized axis, in increasing axis order as the reference goes. In the fp16 domain a
nearest Resize copies the halves as they are; the other modes run widened (half.widen)."""

from __future__ import annotations

from mnn_core.ops.resize import axis_is_identity, axis_taps, resize_geometry

from . import _arm, half
from ._common import kernel, prod, static_shape


@kernel("Resize", half_native=True, efficiency=0.4)
def prepare_resize(node, ins, outs, constants, ctx):
    shape = list(static_shape(ins[0]))
    out, scales, roi = resize_geometry(tuple(shape), node.attrs)
    passes, cur, work = [], list(shape), 1
    if 0 not in shape:
        for axis in range(len(shape)):
            if axis_is_identity(out[axis], shape[axis], scales[axis], roi[axis]):
                continue
            idx, w, outside = axis_taps(out[axis], shape[axis], scales[axis], node.attrs, roi[axis])
            passes.append(
                (
                    prod(cur[:axis]),
                    cur[axis],
                    out[axis],
                    prod(cur[axis + 1 :]),
                    idx,
                    w,
                    outside,
                    float(node.attrs["extrapolation_value"]),
                    int(node.attrs["mode"] == "nearest"),
                )
            )
            cur[axis] = out[axis]
            work = max(work, prod(cur))
    if not half.half_activations(ctx):
        return _arm.resize("arm.Resize", passes, work)
    if all(p[8] for p in passes):
        return _arm.resize("arm.Resize", passes, work, True)
    return half.widen(_arm.resize("arm.Resize", passes, work), ins, outs)

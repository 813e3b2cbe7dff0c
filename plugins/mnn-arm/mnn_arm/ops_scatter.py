"""ScatterElements and the deprecated Scatter on Arm (csrc/scatter.c): a copy of data with the updates
written, or reduced (add, mul, max, min: float32, float64, int32, int64), at their indices along an axis.
Any element type without a reduction; indices of int32 or int64, in any shape within data's."""

from __future__ import annotations

import numpy as np

from mnn_core.ops.helpers import normalize_axis

from . import _arm
from ._common import kernel, static_shape

REDUCTIONS = {"none": 0, "add": 1, "mul": 2, "max": 3, "min": 4}
#: enum arm_scatter_dtype: the types a reduction runs on
REDUCED = {"float32": 0, "float64": 1, "int32": 2, "int64": 3}
ANY_TYPE = 4
MAX_DIMS = 8
#: whole-byte element types (the sub-byte ones are not copied element by element)
DTYPES = (
    "float32",
    "float16",
    "float64",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
)


def _supports(node, ins):
    data, idx = ins[0], ins[1]
    if idx.dtype not in ("int32", "int64"):
        return f"indices of {idx.dtype}"
    if data.shape is None or idx.shape is None or not 0 < len(data.shape) <= MAX_DIMS:
        return f"data of 1 to {MAX_DIMS} dims"
    reduction = node.attrs.get("reduction", "none")
    if reduction != "none" and data.dtype not in REDUCED:
        return f"reduction {reduction} of {data.dtype}"
    axis = node.attrs["axis"] % len(data.shape)
    if len(idx.shape) != len(data.shape) or any(
        i > d for k, (i, d) in enumerate(zip(idx.shape, data.shape)) if k != axis
    ):
        return f"indices {idx.shape} exceed data {data.shape} off axis {axis}"
    return True


def _prepare(node, ins, outs, constants, ctx):
    data, idx = static_shape(ins[0]), static_shape(ins[1])
    reduction = node.attrs.get("reduction", "none")
    return _arm.scatter_elements(
        f"arm.{node.op}",
        normalize_axis(node.attrs["axis"], len(data), node.op),
        REDUCTIONS[reduction],
        REDUCED.get(ins[0].dtype, ANY_TYPE) if reduction != "none" else ANY_TYPE,
        np.dtype(ins[0].dtype).itemsize,
        data,
        idx,
    )


for _op in ("ScatterElements", "Scatter"):
    kernel(_op, dtypes=DTYPES, supports=_supports, efficiency=0.3)(_prepare)

"""Ops that compute shapes rather than data: Shape, Size, ConstantOfShape, Range.

ONNX graphs build Reshape targets, masks and position ids with them from input shapes. At resize
their inputs are known, so they run once there and their outputs become constants of the plan
(graph/shapes.py); before resize their outputs are as symbolic as their inputs. No backend runs
them, so they have no conformance samples; tests/test_shapes_at_resize.py checks them against
ONNX Runtime.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ..graph.symbolic import UNKNOWN, Sym, is_sym
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

register(
    OpSchema(
        "Shape",
        infer=lambda ins, attrs: [TensorInfo((len(ins[0].shape[attrs["start"] : attrs["end"]]),), "int64")],
        reference=lambda ins, attrs: [np.array(ins[0].shape[attrs["start"] : attrs["end"]], dtype=np.int64)],
        attrs={"start": Attr("int", 0), "end": Attr("int", None, doc="exclusive; absent: the rank")},
        flops=lambda ins, outs, attrs: 0.0,
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 3, 4)], label="(2, 3, 4)"),
                Sample([rand(rng)], label="scalar"),
                Sample([rand(rng, 0, 5)], label="(0, 5)"),
                Sample([rng.random((7,)) > 0.5], label="bool input"),
            ]
        ),
        doc="The input's shape as a 1-D int64 tensor.",
    )
)

register(
    OpSchema(
        "Size",
        infer=lambda ins, attrs: [TensorInfo((), "int64")],
        reference=lambda ins, attrs: [np.array(ins[0].size, np.int64)],
        flops=lambda ins, outs, attrs: 0.0,
        samples=lambda rng: iter([Sample([rand(rng, 2, 3, 5)]), Sample([rand(rng, 0, 4)]), Sample([rand(rng)])]),
        doc="The number of elements of the input, as an int64 scalar.",
    )
)


def _fill_value(attrs) -> np.ndarray:
    value = np.asarray(attrs["value"]).reshape(-1)
    if value.size != 1:
        raise GraphError(f"ConstantOfShape: value must hold one element, got {value.size}")
    return value


def _constant_of_shape_infer(ins, attrs):
    shape = attrs["shape"]
    if any(not is_sym(d) and d < 0 for d in shape):
        raise GraphError(f"ConstantOfShape: shape {shape} has a negative dim")
    return [TensorInfo(tuple(shape), _fill_value(attrs).dtype.name)]


register(
    OpSchema(
        "ConstantOfShape",
        infer=_constant_of_shape_infer,
        reference=lambda ins, attrs: [np.full(attrs["shape"], _fill_value(attrs)[0], _fill_value(attrs).dtype)],
        attrs={
            "shape": Attr("ints", [], doc="the output's shape (empty: a scalar)"),
            "value": Attr("tensor", np.zeros(1, np.float32), doc="one element: the fill value and dtype"),
        },
        value_inputs={0: "shape"},
        n_inputs=(0, 1),
        doc="A tensor of `shape` filled with `value`.",
    )
)


def _range_length(start, limit, delta):
    if any(is_sym(v) for v in (start, limit, delta)):
        return limit - start if delta == 1 and not is_sym(start) else Sym(UNKNOWN)
    if delta == 0:
        raise GraphError("Range: delta is 0")
    return max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)


def _scalar(v):
    v = np.asarray(v).reshape(-1)
    if v.size != 1:
        raise GraphError(f"Range takes scalars, got {v.size} values")
    return v[0]


def _range_infer(ins, attrs):
    start, limit, delta = (_scalar(attrs[k]) for k in ("start", "limit", "delta"))
    dtype = np.asarray(attrs["start"]).dtype
    return [TensorInfo((_range_length(start, limit, delta),), "int64" if dtype.hasobject else dtype.name)]


def _range(ins, attrs):
    start, limit, delta = (np.asarray(attrs[k]).reshape(-1) for k in ("start", "limit", "delta"))
    n = _range_length(start[0], limit[0], delta[0])
    return [(start[0] + np.arange(n) * delta[0]).astype(start.dtype)]


register(
    OpSchema(
        "Range",
        infer=_range_infer,
        reference=_range,
        attrs={
            k: Attr("tensor", None, doc=f"the {k} (a scalar; given by input {i})")
            for i, k in enumerate(("start", "limit", "delta"))
        },
        value_inputs={0: "start", 1: "limit", 2: "delta"},
        n_inputs=(0, 3),  # (constant ones become attributes)
        doc="start, start + delta, ... up to limit (exclusive), in the inputs' dtype.",
    )
)

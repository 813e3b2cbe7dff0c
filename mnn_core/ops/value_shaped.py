"""Ops whose output shapes follow input *values*, with ONNX semantics: NonZero, Compress, Unique.

Their sizes are unknown until the values are, so they are `dynamic`: a graph using them
runs eagerly (`mnn_core.graph.evaluate`); shape inference gives symbolic sizes.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register

register(OpSchema(
    "NonZero", dynamic=True,
    infer=lambda ins, attrs: [TensorInfo((len(ins[0].shape), "NonZero_count"), "int64")],
    reference=lambda ins, attrs: [np.array(np.nonzero(ins[0]), dtype=np.int64).reshape(ins[0].ndim, -1)],
    doc="Indices of the nonzero elements, one row per axis: [rank, count], in row-major order.",
    samples=lambda rng: iter([Sample([rng.random((3, 4)) > 0.5]), Sample([rand(rng, 5) * (rng.random(5) > 0.3)])])))


def _compress_infer(ins, attrs):
    x = ins[0]
    if attrs["axis"] is None:
        return [TensorInfo(("Compress_count",), x.dtype)]
    axis = normalize_axis(attrs["axis"], len(x.shape), "Compress")
    shape = list(x.shape)
    shape[axis] = "Compress_count"
    return [TensorInfo(tuple(shape), x.dtype)]


def _compress(ins, attrs):
    x, cond = np.asarray(ins[0]), np.asarray(ins[1]).astype(bool).reshape(-1)
    if attrs["axis"] is None:
        x = x.reshape(-1)
        axis = 0
    else:
        axis = normalize_axis(attrs["axis"], x.ndim, "Compress")
    if cond.size > x.shape[axis]:
        raise GraphError(f"Compress: condition has {cond.size} entries, the axis only {x.shape[axis]}")
    return [np.compress(cond, x, axis=axis)]


register(OpSchema(
    "Compress", infer=_compress_infer, reference=_compress, n_inputs=(2, 2), dynamic=True,
    attrs={"axis": Attr("int", None, doc="absent: the input is flattened first")},
    doc="The slices along `axis` where the condition is true (a shorter condition leaves the rest out).",
    samples=lambda rng: iter([Sample([rand(rng, 3, 4), rng.random(3) > 0.5], {"axis": 0}),
                              Sample([rand(rng, 3, 4), rng.random(7) > 0.5])])))


def _unique_infer(ins, attrs):
    x = ins[0]
    if attrs["axis"] is None:
        y = TensorInfo(("Unique_count",), x.dtype)
    else:
        shape = list(x.shape)
        shape[normalize_axis(attrs["axis"], len(shape), "Unique")] = "Unique_count"
        y = TensorInfo(tuple(shape), x.dtype)
    n = TensorInfo(("Unique_count",), "int64")
    inverse = TensorInfo((x.size if attrs["axis"] is None else
                          x.shape[normalize_axis(attrs["axis"], len(x.shape), "Unique")],), "int64")
    return [y, n, inverse, n]


def _unique(ins, attrs):
    x = np.asarray(ins[0])
    axis = attrs["axis"]
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis(axis, x.ndim, "Unique")
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                               axis=axis)
    inverse = inverse.reshape(-1)
    if not attrs["sorted"]:  # in order of first occurrence
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values, first, counts, inverse = np.take(values, order, axis=axis), first[order], counts[order], rank[inverse]
    return [values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]


register(OpSchema(
    "Unique", infer=_unique_infer, reference=_unique, n_outputs=4, dynamic=True,
    attrs={"axis": Attr("int", None, doc="absent: unique elements of the flattened input"),
           "sorted": Attr("int", 1, (0, 1), "1: ascending; 0: in order of first occurrence")},
    doc="Unique elements (or slices along `axis`), the index of each one's first occurrence, the index "
        "into the uniques of every input element (slice), and the counts.",
    samples=lambda rng: iter([Sample([rng.integers(0, 5, (3, 4)).astype(np.int64)], {"sorted": 0}),
                              Sample([rng.integers(0, 3, (4, 2)).astype(np.float32)], {"axis": 0})])))


# -- attributes that arrive as runtime values ----------------------------------------------------------------

def _slice_attrs(ins) -> dict:
    names = ("starts", "ends", "axes", "steps")
    return {n: [int(v) for v in np.asarray(x).reshape(-1)] for n, x in zip(names, ins[1:]) if x is not None}


def _slice_dynamic(ins, attrs):
    from .schema import get_schema

    static = get_schema("Slice")
    return static.reference(ins[:1], static.check_attrs(_slice_attrs(ins), "SliceDynamic"))


def _slice_dynamic_infer(ins, attrs):
    return [TensorInfo(tuple(f"SliceDynamic_d{i}" for i in range(len(ins[0].shape))), ins[0].dtype)]


register(OpSchema(
    "SliceDynamic", infer=_slice_dynamic_infer, reference=_slice_dynamic, n_inputs=(3, 5), dynamic=True,
    doc="Slice with starts, ends (and axes, steps) given as int tensors at run time, as ONNX Slice (opset 10+) "
        "takes them; what an imported body uses when they follow a loop's counter.",
    samples=lambda rng: iter([Sample([rand(rng, 4, 6), np.array([1]), np.array([3])]),
                              Sample([rand(rng, 4, 6), np.array([-1, 0]), np.array([0, 5]), np.array([0, 1]),
                                      np.array([-1, 2])])])))

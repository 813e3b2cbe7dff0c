"""Indexing ops: GatherElements, GatherND, ScatterElements, ScatterND, TopK, OneHot,
ReverseSequence, DepthToSpace and SpaceToDepth."""

from __future__ import annotations

import math

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import info_like, normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _fix_negative(indices: np.ndarray, size) -> np.ndarray:
    return np.where(indices < 0, indices + size, indices)


# -- GatherElements / ScatterElements ----------------------------------------------------------------


def _gather_elements_infer(ins, attrs):
    x, idx = ins
    if len(x.shape) != len(idx.shape):
        raise GraphError(f"GatherElements: data {x.shape} and indices {idx.shape} must have one rank")
    normalize_axis(attrs["axis"], len(x.shape), "GatherElements")
    return [info_like(x, idx.shape)]


def _gather_elements(ins, attrs):
    x, idx = ins
    axis = normalize_axis(attrs["axis"], x.ndim, "GatherElements")
    return [np.take_along_axis(x, _fix_negative(idx.astype(np.int64), x.shape[axis]), axis=axis)]


register(
    OpSchema(
        "GatherElements",
        infer=_gather_elements_infer,
        reference=_gather_elements,
        attrs={"axis": Attr("int", 0)},
        n_inputs=(2, 2),
        doc="out[i][j] = data[index[i][j]][j] (axis 0), like numpy's take_along_axis.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 3, 4), rng.integers(-3, 3, (2, 4))], {"axis": 0}),
                Sample([rand(rng, 2, 5, 3), rng.integers(0, 5, (2, 2, 3))], {"axis": 1}),
            ]
        ),
    )
)


def _scatter_reduce(target, index, values, reduction):
    if reduction == "none":
        target[index] = values
        return
    ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduction]
    ufunc.at(target, index, values)


def _scatter_elements(ins, attrs):
    x, idx, upd = ins
    axis = normalize_axis(attrs["axis"], x.ndim, "ScatterElements")
    out = x.copy()
    idx = _fix_negative(idx.astype(np.int64), x.shape[axis])
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    _scatter_reduce(out, tuple(grid), upd, attrs.get("reduction", "none"))
    return [out]


def _scatter_elements_infer(ins, attrs):
    x, idx, upd = ins
    if idx.shape != upd.shape or len(idx.shape) != len(x.shape):
        raise GraphError(f"ScatterElements: indices {idx.shape} and updates {upd.shape} must match, rank of {x.shape}")
    return [x]


_SCATTER_ATTRS = {"axis": Attr("int", 0), "reduction": Attr("str", "none", REDUCTIONS)}
for _name in ("ScatterElements", "Scatter"):
    register(
        OpSchema(
            _name,
            infer=_scatter_elements_infer,
            reference=_scatter_elements,
            attrs=dict(_SCATTER_ATTRS) if _name == "ScatterElements" else {"axis": Attr("int", 0)},
            n_inputs=(3, 3),
            doc="A copy of data with updates written at indices along an axis (optionally reduced).",
            samples=lambda rng: iter(
                [
                    Sample([rand(rng, 3, 3), np.array([[1, 0, 2], [0, 2, 1]]), rand(rng, 2, 3)], {"axis": 0}),
                    Sample([rand(rng, 1, 5), np.array([[1, 3]]), rand(rng, 1, 2)], {"axis": 1}),
                ]
            ),
        )
    )


# -- GatherND / ScatterND --------------------------------------------------------------------------


def _gather_nd_infer(ins, attrs):
    x, idx = ins[0].shape, ins[1].shape
    b = attrs["batch_dims"]
    if not idx or idx[-1] > len(x) - b or x[:b] != idx[:b]:
        raise GraphError(f"GatherND: indices {idx} do not fit data {x} with batch_dims={b}")
    return [TensorInfo(tuple(idx[:-1]) + tuple(x[b + idx[-1] :]), ins[0].dtype)]


def _gather_nd(ins, attrs):
    x, idx = ins[0], ins[1].astype(np.int64)
    b = attrs["batch_dims"]
    batch = x.shape[:b]
    n = math.prod(batch)  # counts, not -1: a reshape cannot infer a dimension of an empty array
    xs = x.reshape((n,) + x.shape[b:])
    ids = idx.reshape((n,) + idx.shape[b:])
    k = idx.shape[-1]
    outs = []
    for xb, ib in zip(xs, ids):
        flat = ib.reshape(math.prod(ib.shape[:-1]), k)
        flat = _fix_negative(flat, np.array(xb.shape[:k]))
        outs.append(np.stack([xb[tuple(t)] for t in flat]) if len(flat) else np.empty((0,) + xb.shape[k:], x.dtype))
    out = np.stack(outs) if outs else np.empty((0,), x.dtype)
    return [out.reshape(tuple(batch) + tuple(idx.shape[b:-1]) + tuple(x.shape[b + k :]))]


register(
    OpSchema(
        "GatherND",
        infer=_gather_nd_infer,
        reference=_gather_nd,
        attrs={"batch_dims": Attr("int", 0)},
        n_inputs=(2, 2),
        doc="Gather slices of data addressed by the last axis of indices.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 2), np.array([[0, 0], [1, 1]])]),
                Sample([rand(rng, 2, 3, 4), np.array([[1], [0]])]),
                Sample([rand(rng, 2, 3, 4), np.array([[1, 2], [0, 1]])], {"batch_dims": 1}),
            ]
        ),
    )
)


def _scatter_nd(ins, attrs):
    x, idx, upd = ins[0], ins[1].astype(np.int64), ins[2]
    out = x.copy()
    k = idx.shape[-1]
    n = math.prod(idx.shape[:-1])  # a count, not -1: an empty array's reshape cannot infer it
    flat_idx = idx.reshape(n, k)
    flat_upd = upd.reshape((n,) + x.shape[k:])
    for t, u in zip(flat_idx, flat_upd):
        t = tuple(_fix_negative(t, np.array(x.shape[:k])))
        if attrs["reduction"] == "none":
            out[t] = u
        else:
            fn = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[attrs["reduction"]]
            out[t] = fn(out[t], u)
    return [out]


def _scatter_nd_infer(ins, attrs):
    x, idx, upd = (i.shape for i in ins)
    k = idx[-1] if idx else 0
    if not idx or k > len(x) or tuple(upd) != tuple(idx[:-1]) + tuple(x[k:]):
        raise GraphError(f"ScatterND: updates {upd} must be indices[:-1] + data[k:] for data {x}, indices {idx}")
    return [ins[0]]


register(
    OpSchema(
        "ScatterND",
        infer=_scatter_nd_infer,
        reference=_scatter_nd,
        attrs={"reduction": Attr("str", "none", REDUCTIONS)},
        n_inputs=(3, 3),
        doc="A copy of data with slices replaced (or reduced) at N-D indices.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 8), np.array([[4], [3], [1], [7]]), rand(rng, 4)]),
                Sample([rand(rng, 4, 4, 4), np.array([[0], [2]]), rand(rng, 2, 4, 4)], {"reduction": "add"}),
            ]
        ),
    )
)


# -- TopK ----------------------------------------------------------------------------------------------


def _topk_infer(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], len(x.shape), "TopK")
    if not 0 <= attrs["k"] <= x.shape[axis]:
        raise GraphError(f"TopK: k={attrs['k']} is out of range for axis {axis} of {x.shape}")
    shape = list(x.shape)
    shape[axis] = attrs["k"]
    return [info_like(x, shape), TensorInfo(tuple(shape), "int64")]


def _topk(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], x.ndim, "TopK")
    key = x.astype(np.float64)
    # stable sort: of equal values the lower index comes first, as ONNX requires
    order = np.argsort(-key if attrs["largest"] else key, axis=axis, kind="stable")
    idx = np.take(order, range(attrs["k"]), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)]


register(
    OpSchema(
        "TopK",
        infer=_topk_infer,
        reference=_topk,
        n_outputs=2,
        value_inputs={1: "k"},
        attrs={
            "k": Attr("int"),
            "axis": Attr("int", -1),
            "largest": Attr("int", 1, (0, 1)),
            "sorted": Attr("int", 1, (0, 1)),
        },
        doc="The k largest (or smallest) values along an axis, sorted, and their indices.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 3, 4)], {"k": 2}),
                Sample([rand(rng, 2, 5, 3)], {"k": 3, "axis": 1, "largest": 0}),
                Sample([np.array([[1, 3, 3, 2]], np.float32)], {"k": 3}),
            ]
        ),
    )
)


# -- OneHot --------------------------------------------------------------------------------------------


def _onehot_infer(ins, attrs):
    idx, values = ins
    rank = len(idx.shape) + 1
    axis = normalize_axis(attrs["axis"], rank, "OneHot")
    shape = list(idx.shape)
    shape.insert(axis, attrs["depth"])
    if values.size != 2:
        raise GraphError(f"OneHot: values must hold [off, on], got shape {values.shape}")
    return [TensorInfo(tuple(shape), values.dtype)]


def _onehot(ins, attrs):
    idx, values = ins
    depth = attrs["depth"]
    axis = normalize_axis(attrs["axis"], idx.ndim + 1, "OneHot")
    i = idx.astype(np.int64)
    i = np.where(i < 0, i + depth, i)
    hot = np.expand_dims(i, axis) == np.arange(depth).reshape([-1 if d == axis else 1 for d in range(idx.ndim + 1)])
    return [np.where(hot, values.reshape(-1)[1], values.reshape(-1)[0]).astype(values.dtype)]


register(
    OpSchema(
        "OneHot",
        infer=_onehot_infer,
        reference=_onehot,
        n_inputs=(2, 2),
        value_inputs={2: "depth"},  # (after `values`, where ONNX has it second: the importer moves it)
        attrs={"depth": Attr("int"), "axis": Attr("int", -1)},
        doc="One-hot encoding: values[1] where the index matches, values[0] elsewhere.",
        samples=lambda rng: iter(
            [
                Sample([np.array([0, 2, 1, -1]), np.array([0, 1], np.float32)], {"depth": 3}),
                Sample([np.array([[1, 4], [2, 0]]), np.array([2, 5], np.int64)], {"depth": 5, "axis": 0}),
            ]
        ),
    )
)


# -- ReverseSequence -------------------------------------------------------------------------------------


def _reverse_sequence(ins, attrs):
    x, lens = ins
    out = x.copy()
    b_axis, t_axis = attrs["batch_axis"], attrs["time_axis"]
    for b, n in enumerate(lens.astype(np.int64)):
        src = [slice(None)] * x.ndim
        src[b_axis] = b
        src[t_axis] = slice(0, int(n))
        out[tuple(src)] = np.flip(x[tuple(src)], axis=t_axis - (t_axis > b_axis))
    return [out]


def _reverse_sequence_infer(ins, attrs):
    x, lens = ins
    if {attrs["batch_axis"], attrs["time_axis"]} != {0, 1} or lens.shape != (x.shape[attrs["batch_axis"]],):
        raise GraphError(f"ReverseSequence: batch/time axes must be 0 and 1 and lengths [{x.shape[0]}]")
    return [x]


register(
    OpSchema(
        "ReverseSequence",
        infer=_reverse_sequence_infer,
        reference=_reverse_sequence,
        n_inputs=(2, 2),
        attrs={"batch_axis": Attr("int", 1, (0, 1)), "time_axis": Attr("int", 0, (0, 1))},
        doc="Reverse the first sequence_lens[b] time steps of each batch entry.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 4, 3, 2), np.array([4, 2, 1])]),
                Sample([rand(rng, 3, 5), np.array([1, 5, 3])], {"batch_axis": 0, "time_axis": 1}),
            ]
        ),
    )
)


# -- DepthToSpace / SpaceToDepth ------------------------------------------------------------------------


def _d2s_infer(ins, attrs):
    n, c, h, w = _nchw(ins[0], "DepthToSpace")
    b = attrs["blocksize"]
    if c % (b * b):
        raise GraphError(f"DepthToSpace: channels {c} are not a multiple of blocksize^2 = {b * b}")
    return [info_like(ins[0], (n, c // (b * b), h * b, w * b))]


def _d2s(ins, attrs):
    x, b = ins[0], attrs["blocksize"]
    n, c, h, w = x.shape
    if attrs["mode"] == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return [y.reshape(n, c // (b * b), h * b, w * b)]


def _s2d_infer(ins, attrs):
    n, c, h, w = _nchw(ins[0], "SpaceToDepth")
    b = attrs["blocksize"]
    if h % b or w % b:
        raise GraphError(f"SpaceToDepth: {h}x{w} is not a multiple of blocksize {b}")
    return [info_like(ins[0], (n, c * b * b, h // b, w // b))]


def _s2d(ins, attrs):
    x, b = ins[0], attrs["blocksize"]
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return [y.reshape(n, c * b * b, h // b, w // b)]


def _nchw(info, op):
    if len(info.shape) != 4:
        raise GraphError(f"{op} takes NCHW (4-D) input, got {info.shape}")
    return info.shape


register(
    OpSchema(
        "DepthToSpace",
        infer=_d2s_infer,
        reference=_d2s,
        attrs={"blocksize": Attr("int"), "mode": Attr("str", "DCR", ("DCR", "CRD"))},
        doc="Move channel blocks into spatial blocks (pixel shuffle).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 1, 8, 2, 3)], {"blocksize": 2}),
                Sample([rand(rng, 2, 9, 2, 2)], {"blocksize": 3, "mode": "CRD"}),
            ]
        ),
    )
)
register(
    OpSchema(
        "SpaceToDepth",
        infer=_s2d_infer,
        reference=_s2d,
        attrs={"blocksize": Attr("int")},
        doc="Move spatial blocks into channels.",
        samples=lambda rng: iter([Sample([rand(rng, 1, 2, 4, 6)], {"blocksize": 2})]),
    )
)

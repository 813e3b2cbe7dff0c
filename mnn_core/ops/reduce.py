"""Reductions over axes (ReduceSum, ReduceMean, ...) and ArgMax / ArgMin."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register


def reduce_axes(shape: tuple, axes: list, op: str) -> tuple:
    """Normalized, sorted axes to reduce (all of them when `axes` is empty)."""
    if not axes:
        return tuple(range(len(shape)))
    norm = [normalize_axis(a, len(shape), op) for a in axes]
    if len(set(norm)) != len(norm):
        raise GraphError(f"{op}: axes {axes} name an axis twice (rank {len(shape)})")
    return tuple(sorted(norm))


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_infer(op):
    def infer(ins, attrs):
        x = ins[0]
        if x.dtype == "bool" and op not in ("ReduceMax", "ReduceMin"):  # (those two are any / all)
            raise GraphError(f"{op} does not take bool input")
        if not attrs["axes"] and attrs["noop_with_empty_axes"]:
            return [x]
        axes = reduce_axes(x.shape, attrs["axes"], op)
        return [TensorInfo(_reduced_shape(x.shape, axes, attrs["keepdims"]), x.dtype)]

    return infer


def _lowest(dtype):
    if dtype.kind == "b":
        return False
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    if dtype.kind == "b":
        return True
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _wide(x):
    """Accumulate floats in float64; integers stay integers (wrapping as in C)."""
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def _mean(x, axes, keep):
    count = int(np.prod([x.shape[a] for a in axes]))
    with np.errstate(invalid="ignore", divide="ignore"):  # the mean of nothing is NaN
        return np.sum(_wide(x).astype(np.float64), axis=axes, keepdims=keep) / count


def _log(x):
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, as ONNX Runtime
        return np.log(x)


def _log_sum_exp(x, axes, keep):
    """log(sum(exp(x))) with the maximum taken out first, so large inputs do not overflow."""
    if x.size == 0 or any(x.shape[a] == 0 for a in axes):
        return _log(np.sum(np.exp(x), axis=axes, keepdims=keep))
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = _log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keep else np.squeeze(out, axis=axes)


_REDUCERS = {
    "ReduceSum": lambda x, axes, keep: np.sum(_wide(x), axis=axes, keepdims=keep),
    "ReduceMean": _mean,
    "ReduceMax": lambda x, axes, keep: np.max(x, axis=axes, keepdims=keep, initial=_lowest(x.dtype)),
    "ReduceMin": lambda x, axes, keep: np.min(x, axis=axes, keepdims=keep, initial=_highest(x.dtype)),
    "ReduceProd": lambda x, axes, keep: np.prod(_wide(x), axis=axes, keepdims=keep),
    "ReduceL2": lambda x, axes, keep: np.sqrt(np.sum(_wide(x).astype(np.float64) ** 2, axis=axes, keepdims=keep)),
    "ReduceL1": lambda x, axes, keep: np.sum(np.abs(_wide(x)), axis=axes, keepdims=keep),
    "ReduceSumSquare": lambda x, axes, keep: np.sum(_wide(x) * _wide(x), axis=axes, keepdims=keep),
    "ReduceLogSum": lambda x, axes, keep: _log(np.sum(_wide(x).astype(np.float64), axis=axes, keepdims=keep)),
    "ReduceLogSumExp": lambda x, axes, keep: _log_sum_exp(_wide(x).astype(np.float64), axes, keep),
}


def _reduce_kernel(op):
    fn = _REDUCERS[op]

    def kernel(ins, attrs):
        x = ins[0]
        if not attrs["axes"] and attrs["noop_with_empty_axes"]:
            axes = ()  # reduce each element alone: identity, except ReduceL2 gives |x| (as ONNX)
        else:
            axes = reduce_axes(x.shape, attrs["axes"], op)
        return [np.asarray(fn(x, axes, bool(attrs["keepdims"]))).astype(x.dtype)]

    return kernel


def _reduce_samples(op):
    def samples(rng):
        cases = [
            ((3, 7), {"axes": [1]}),
            ((2, 3, 4, 5), {"axes": [2, 3]}),
            ((2, 3, 4, 5), {"axes": [-1, 1], "keepdims": 0}),
            ((4, 6), {}),
            ((4, 6), {"keepdims": 0}),
            ((5, 1, 9), {"axes": [0]}),
            ((0, 3), {"axes": [1]}),
            ((3, 2), {"axes": [], "noop_with_empty_axes": 1}),
            ((13,), {"axes": [0], "keepdims": 0}),
        ]
        lo, hi = (0.5, 1.5) if op in ("ReduceProd", "ReduceLogSum") else (-1.0, 1.0)
        for shape, attrs in cases:
            yield Sample([rand(rng, *shape, low=lo, high=hi)], attrs, label=f"{shape} {attrs}")
        if op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
            x = rng.integers(-5, 6, size=(3, 4, 5)).astype("int64")
            yield Sample([x], {"axes": [1]}, label="int64")
            yield Sample([x.astype("int32")], {"axes": [0, 2], "keepdims": 0}, label="int32")
        if op in ("ReduceMax", "ReduceMin"):  # any / all
            yield Sample([rng.random((4, 5)) > 0.7], {"axes": [1]}, label="bool")
            yield Sample([np.zeros((2, 0, 3), bool)], {"axes": [1]}, label="bool, empty set")
        if op in ("ReduceSum", "ReduceProd", "ReduceL2", "ReduceL1", "ReduceSumSquare"):
            yield Sample([rand(rng, 2, 0, 3)], {"axes": [1]}, label="over an empty axis")
        if op == "ReduceLogSumExp":
            yield Sample([rand(rng, 3, 5, low=200.0, high=400.0)], {"axes": [1]}, label="large inputs")

    return samples


for _name in _REDUCERS:
    register(
        OpSchema(
            _name,
            infer=_reduce_infer(_name),
            reference=_reduce_kernel(_name),
            attrs={
                "axes": Attr("ints", [], doc="axes to reduce; empty means all of them"),
                "keepdims": Attr("int", 1, (0, 1)),
                "noop_with_empty_axes": Attr("int", 0, (0, 1), "with empty axes: 1 = reduce nothing, 0 = reduce all"),
            },
            flops=lambda ins, outs, attrs: float(ins[0].size),
            samples=_reduce_samples(_name),
            doc=f"{_name} over `axes` (all when empty), keeping them as size 1 when keepdims.",
            value_inputs={1: "axes"},
        )
    )


# -- ArgMax / ArgMin ----------------------------------------------------------------


def _arg_infer(op):
    def infer(ins, attrs):
        x = ins[0]
        if x.dtype == "bool":
            raise GraphError(f"{op} does not take bool input")
        axis = normalize_axis(attrs["axis"], len(x.shape), op)
        if not x.shape or x.shape[axis] == 0:
            raise GraphError(f"{op}: axis {attrs['axis']} of {x.shape} is empty; there is no index to return")
        return [TensorInfo(_reduced_shape(x.shape, (axis,), attrs["keepdims"]), "int64")]

    return infer


def _arg_kernel(fn):
    def kernel(ins, attrs):
        x = ins[0]
        axis = attrs["axis"] % x.ndim
        if attrs["select_last_index"]:  # search the reversed axis, then map back
            idx = x.shape[axis] - 1 - fn(np.flip(x, axis), axis=axis, keepdims=True)
        else:
            idx = fn(x, axis=axis, keepdims=True)
        if not attrs["keepdims"]:
            idx = np.squeeze(idx, axis)
        return [idx.astype(np.int64)]

    return kernel


def _arg_samples(rng):
    yield Sample([rand(rng, 4, 9)], {"axis": 1}, label="(4, 9) axis=1")
    yield Sample([rand(rng, 3, 5, 7)], {}, label="(3, 5, 7) default axis 0")
    yield Sample([rand(rng, 3, 5, 7)], {"axis": -1, "keepdims": 0}, label="axis=-1 keepdims=0")
    ties = rng.integers(0, 3, size=(6, 8)).astype("int32")
    yield Sample([ties], {"axis": 1}, label="ties, first index")
    yield Sample([ties], {"axis": 1, "select_last_index": 1}, label="ties, last index")
    yield Sample([ties.astype("float32")], {"axis": 0, "keepdims": 0, "select_last_index": 1}, label="float ties")
    yield Sample([rand(rng, 0, 5)], {"axis": 1}, label="empty batch")
    yield Sample([rand(rng, 11)], {"keepdims": 0}, label="1-D to scalar")


for _name, _fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
    register(
        OpSchema(
            _name,
            infer=_arg_infer(_name),
            reference=_arg_kernel(_fn),
            attrs={
                "axis": Attr("int", 0),
                "keepdims": Attr("int", 1, (0, 1)),
                "select_last_index": Attr("int", 0, (0, 1), "on ties, the last index instead of the first"),
            },
            flops=lambda ins, outs, attrs: float(ins[0].size),
            samples=_arg_samples,
            doc=f"{_name}: int64 index along `axis` ({'largest' if _name == 'ArgMax' else 'smallest'} value).",
        )
    )

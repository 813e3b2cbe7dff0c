"""Random ScatterElements and ArgMax / ArgMin cases for the GPU backends, beyond the op schemas'
samples: odd sizes, every axis (negative ones too), int32 and int64 indices with negative entries,
int32 and int64 data, and each reduction with duplicate indices (the order they apply in is the
reference's, index order); plain writes get unique indices per line, where ONNX defines the result.
ArgMax / ArgMin with keepdims either way, ties broken first or last (select_last_index) and long
rows. `index_cases()` gives them as mnn_core.testing conformance cases."""

from __future__ import annotations

import numpy as np


def _unique_indices(rng, data_shape, idx_shape, axis):
    """Indices of idx_shape naming distinct positions along `axis` in each line, some negative."""
    dim = data_shape[axis]
    full = list(idx_shape)
    full[axis] = dim
    idx = np.argsort(rng.random(full), axis=axis)
    idx = np.take(idx, np.arange(idx_shape[axis]), axis=axis)
    return np.where(rng.random(idx.shape) < 0.3, idx - dim, idx)


def _scatter(rng):
    for data_shape, idx_shape, axis in [
        ((7,), (5,), 0),
        ((3, 5), (2, 3), 1),
        ((5, 3), (5, 3), 0),
        ((2, 9, 4), (2, 6, 3), -2),
        ((4, 3, 5, 2), (3, 2, 5, 1), -1),
        ((1, 33, 97), (1, 1, 97), 1),
        ((3, 2, 1, 4, 5, 2), (2, 2, 1, 3, 4, 2), 4),
    ]:
        a = axis % len(data_shape)
        idx = _unique_indices(rng, data_shape, idx_shape, a)
        data = rng.standard_normal(data_shape).astype(np.float32)
        upd = rng.standard_normal(idx_shape).astype(np.float32)
        label = f"{data_shape} {idx_shape} axis {axis}"
        yield "ScatterElements", [data, idx.astype(np.int64), upd], {"axis": axis}, label
        yield "ScatterElements", [data, idx.astype(np.int32), upd], {"axis": axis}, f"int32 indices {label}"
    data = rng.integers(-50, 50, (4, 7)).astype(np.int64) * (1 << 33)  # both words of int64 values
    idx = _unique_indices(rng, (4, 7), (4, 3), 1)
    yield "ScatterElements", [data, idx, -data[:, :3]], {"axis": 1}, "int64 data"
    idx = _unique_indices(rng, (4, 5), (3, 2), 1)
    yield "Scatter", [data[:, :5].astype(np.int32), idx, idx.astype(np.int32)], {"axis": -1}, "Scatter of int32"
    for reduction in ("add", "mul", "max", "min"):
        for data_shape, idx_shape, axis in [((5, 7), (9, 7), 0), ((3, 4, 5), (3, 4, 11), 2), ((13,), (31,), 0)]:
            dim = data_shape[axis]
            idx = rng.integers(-dim, dim, idx_shape)  # duplicates along the axis
            data = rng.standard_normal(data_shape).astype(np.float32)
            upd = (rng.standard_normal(idx_shape) * (0.5 if reduction == "mul" else 1.0) + 0.5).astype(np.float32)
            label = f"{reduction} {data_shape} {idx_shape} axis {axis}"
            yield "ScatterElements", [data, idx, upd], {"axis": axis, "reduction": reduction}, label
            ints = rng.integers(-4, 5, data_shape).astype(np.int32), rng.integers(-4, 5, idx_shape).astype(np.int32)
            attrs = {"axis": axis, "reduction": reduction}
            yield "ScatterElements", [ints[0], idx.astype(np.int32), ints[1]], attrs, f"int32 data {label}"


def _argreduce(rng):
    for shape, axis in [((7,), 0), ((3, 5), 0), ((3, 5), 1), ((2, 9, 4), -1), ((4, 1, 6), 1), ((2, 1031), 1)]:
        for op in ("ArgMax", "ArgMin"):
            x = rng.standard_normal(shape).astype(np.float32)
            ties = rng.integers(0, 3, shape).astype(np.float32)  # many equal values
            for keep in (0, 1):
                yield op, [x], {"axis": axis, "keepdims": keep}, f"{shape} axis {axis} keepdims {keep}"
            for last in (0, 1):
                attrs = {"axis": axis, "keepdims": 1, "select_last_index": last}
                yield op, [ties], attrs, f"ties {shape} axis {axis} select_last_index {last}"
            yield op, [ties.astype(np.int32)], {"axis": axis, "select_last_index": 1}, f"int32 {shape} axis {axis}"
            yield op, [x.astype(np.int64) * 7], {"axis": axis}, f"int64 {shape} axis {axis}"


def index_cases(seed: int = 0) -> list:
    """The cases, as mnn_core.testing.conformance.ConformanceCase (run them with run_case)."""
    from ..ops import run_reference
    from .conformance import ConformanceCase, conformance_graph

    rng = np.random.default_rng(seed)
    cases = []
    for op, ins, attrs, label in [*_scatter(rng), *_argreduce(rng)]:
        graph, feeds = conformance_graph(op, ins, attrs)
        cases.append(ConformanceCase(op, len(cases), graph, feeds, run_reference(op, list(ins), attrs), label))
    return cases

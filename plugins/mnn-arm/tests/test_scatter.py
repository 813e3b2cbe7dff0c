"""ScatterElements / Scatter on Arm (ops_scatter.py, csrc/scatter.c) against the reference on random inputs:
odd shapes, negative axes and indices, indices smaller than data along every dim, int32 and int64 indices,
every reduction on float32 / float64 / int32 / int64 (repeated indices reduce one by one), other element
types copied; exact."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core.ops import run_reference
from mnn_core.testing.conformance import one_node_graph

RNG = np.random.default_rng(23)


def _indices(data_shape, idx_shape, axis, unique, dtype):
    """Indices along `axis` in [-size, size): without repeats along the axis where `unique`."""
    size = data_shape[axis]
    if not unique:
        return RNG.integers(-size, size, idx_shape).astype(dtype)
    moved = list(idx_shape)
    moved.append(moved.pop(axis))
    rows = [RNG.permutation(size)[: moved[-1]] for _ in range(int(np.prod(moved[:-1])))]
    idx = np.asarray(rows).reshape(moved)
    idx = np.where(RNG.random(idx.shape) < 0.3, idx - size, idx)  # some counted from the end
    return np.moveaxis(idx, -1, axis).astype(dtype)


def _values(dtype, *shape):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    return RNG.integers(-5, 6, shape).astype(dtype)


CASES = [  # data shape, indices shape, axis, reduction, dtype, index dtype
    ((7,), (5,), 0, "none", "float32", "int64"),
    ((5, 9), (3, 9), 0, "none", "float32", "int64"),
    ((5, 9), (4, 6), -1, "none", "int64", "int32"),
    ((3, 7, 5), (2, 4, 3), 1, "none", "float16", "int64"),
    ((2, 3, 5, 7), (2, 2, 5, 3), -2, "none", "uint8", "int64"),
    ((4, 6), (4, 6), 1, "none", "bool", "int32"),
    ((5, 9), (7, 9), 0, "add", "float32", "int64"),
    ((3, 7, 5), (3, 11, 4), 1, "mul", "float64", "int64"),
    ((6, 5), (6, 9), -1, "max", "int32", "int32"),
    ((2, 9, 3), (2, 13, 3), 1, "min", "int64", "int64"),
    ((4, 5), (4, 8), 1, "max", "float32", "int64"),
]


@needs_arm
@pytest.mark.parametrize("op", ["ScatterElements", "Scatter"])
@pytest.mark.parametrize("i", range(len(CASES)))
def test_scatter_elements(op, i):
    from mnn_core.session import Session

    data_shape, idx_shape, axis, reduction, dtype, idx_dtype = CASES[i]
    if op == "Scatter" and reduction != "none":
        pytest.skip("Scatter (opset 9-10) has no reduction")
    data = _values(dtype, *data_shape)
    if reduction == "max" and dtype == "float32":
        data.flat[::5] = np.nan  # NaN wins a max, as numpy's
    idx = _indices(data_shape, idx_shape, axis, reduction == "none", idx_dtype)
    updates = _values(dtype, *idx_shape)
    attrs = {"axis": axis} if op == "Scatter" else {"axis": axis, "reduction": reduction}
    ins = [data, idx, updates]
    want = run_reference(op, ins, attrs)[0]
    for constant in ((), (1,)):  # indices at run, and constant
        graph, feeds = one_node_graph(op, ins, attrs, constant)
        got = Session(graph, backend="arm", fallback=False, optimize=False).run(feeds)["out"]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{op} {CASES[i]}")


@needs_arm
def test_scatter_index_out_of_range():
    from mnn_core.session import Session

    data, updates = np.zeros((3, 4), np.float32), np.ones((1, 4), np.float32)
    graph, feeds = one_node_graph("ScatterElements", [data, np.full((1, 4), 3, np.int64), updates], {"axis": 0})
    with pytest.raises(Exception, match="out of range"):
        Session(graph, backend="arm", fallback=False, optimize=False).run(feeds)

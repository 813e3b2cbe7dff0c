"""Reductions over any axes, ArgMax/ArgMin, Hardmax, CumSum/CumProd and TopK on x86 (ops_reduce.py,
csrc/reduce/) against the reference backend: every axes combination of a 4-D tensor, odd and size-1
shapes, empty tensors, every attribute mode, each dtype taken, 1 and 2 threads, and tensors large
enough for the threaded paths (outputs shared out, or one reduction cut into parts)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import one_op_graph
from mnn_x86.ops_reduce import REDUCTIONS, reduce_layout, reduce_parts

from mnn_core.ops import run_reference
from mnn_core.session import Session

THREADS = [1, 2]
AXES_4D = [list(c) for r in range(5) for c in itertools.combinations(range(4), r)]


def _data(rng, op, shape, dtype="float32"):
    if dtype.startswith("int"):
        hi = 3 if op == "ReduceProd" else 50
        return rng.integers(-hi, hi + 1, size=shape).astype(dtype)
    if op in ("ReduceProd", "CumProd"):  # products of large tensors stay finite
        spread = 0.2 if np.prod(shape) < 10000 else 0.005
        return np.exp(rng.standard_normal(shape) * spread).astype(dtype)
    if op == "ReduceLogSum":
        return rng.uniform(0.1, 2.0, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _tol(dtype):
    return {"float32": (2e-6, 1e-6), "float64": (1e-12, 1e-12)}.get(str(dtype), (0, 0))


def check(op, inputs, attrs, threads, constant=()):
    """x86 against the reference on every output, twice (the second run reuses dirtied scratch)."""
    graph, feeds = one_op_graph(op, inputs, attrs, constant)
    n_out = 2 if op == "TopK" else 1
    graph.nodes[0].outputs = ["out", "out1"][:n_out]
    graph.outputs = ["out", "out1"][:n_out]
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads)
    wants = run_reference(op, list(inputs), attrs)
    for _ in range(2):
        got = sess.run(feeds)
        for name, want in zip(graph.outputs, wants):
            assert got[name].shape == want.shape and got[name].dtype == want.dtype, (op, attrs)
            rtol, atol = _tol(want.dtype)
            np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=f"{op} {attrs} {threads}")


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_every_axes_of_4d(op, threads, rng):
    x = _data(rng, op, (3, 4, 5, 6))
    for axes, keep in itertools.product(AXES_4D, (0, 1)):
        check(op, [x], {"axes": axes, "keepdims": keep}, threads)
        if axes:  # the same axes counted from the end
            check(op, [x], {"axes": [a - 4 for a in axes[::-1]], "keepdims": keep}, threads)


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_odd_and_size1_shapes(op, rng):
    cases = [
        ((7,), [0]),
        ((1, 1, 1), [1]),
        ((5, 1, 9), [0]),
        ((5, 1, 9), [1, 2]),
        ((3, 1, 17, 1), [2, 3]),
        ((2, 1, 3, 1, 5, 1, 7), [0, 3, 4]),
        ((33, 2, 1, 19), [0, 3]),
        ((2, 3, 2, 3, 2, 3, 2, 3), [1, 3, 5, 7]),
        ((2, 3, 2, 3, 2, 3, 2, 3), [0, 2, 4, 6]),
        ((), []),
    ]
    for (shape, axes), keep in itertools.product(cases, (0, 1)):
        check(op, [_data(rng, op, shape)], {"axes": axes, "keepdims": keep}, 1)


@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_empty_axes_and_empty_tensors(op, rng):
    x = _data(rng, op, (3, 5))
    check(op, [x], {"axes": [], "noop_with_empty_axes": 1}, 1)
    check(op, [x], {"axes": [], "noop_with_empty_axes": 0, "keepdims": 0}, 1)
    check(op, [_data(rng, op, (0, 3))], {"axes": [1]}, 1)  # no outputs
    check(op, [_data(rng, op, (2, 0, 3))], {"axes": [1]}, 1)  # outputs of nothing
    check(op, [_data(rng, op, (2, 0))], {"axes": [1], "keepdims": 0}, 1)


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_large_threaded(op, threads, rng):
    for shape, axes in [
        ((8, 300, 150), [1]),  # many outputs across the inner axis
        ((3000, 129), [1]),  # many outputs, a run each
        ((515, 1003), []),  # one output: the run is cut into parts
        ((2000, 3, 50), [0, 2]),  # three outputs: the reduced positions are cut
        ((4, 2000, 3), [0, 1]),
    ]:
        check(op, [_data(rng, op, shape)], {"axes": axes, "keepdims": 1}, threads)


def test_threaded_layouts_are_the_ones_meant():
    lay = reduce_layout((515, 1003), (0, 1))
    assert (lay["inner"], lay["run"], lay["n_red"], lay["kdim"]) == (1, 515 * 1003, 1, [])
    assert reduce_parts(lay, 2) > 1 and reduce_parts(lay, 1) == 1
    lay = reduce_layout((2000, 3, 50), (0, 2))
    assert (lay["inner"], lay["run"], lay["kdim"], lay["rdim"]) == (1, 50, [3], [2000]) and reduce_parts(lay, 2) > 1
    lay = reduce_layout((2, 64, 7, 7), (2, 3))  # a global average pool: one run of 49 per channel
    assert (lay["inner"], lay["run"], lay["kdim"], lay["rdim"]) == (1, 49, [128], [])


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_dtypes(op, dtype, rng):
    if dtype.startswith("int") and op not in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
        pytest.skip(f"{op} of integers stays on the reference")
    for shape, axes in [((3, 4, 5, 6), [1, 3]), ((3, 4, 5, 6), [0, 1]), ((17, 300), [0]), ((600, 61), [])]:
        for threads in THREADS:
            check(op, [_data(rng, op, shape, dtype)], {"axes": axes, "keepdims": 0}, threads)


def test_integer_wraparound():
    x = np.full((4, 40), 2**20, np.int32)
    check("ReduceSum", [x], {"axes": [1]}, 1)
    check("ReduceProd", [x[:, :5]], {"axes": [1]}, 1)


def test_log_sum_exp_of_large_and_infinite_inputs(rng):
    check("ReduceLogSumExp", [rng.uniform(200, 400, (3, 50)).astype(np.float32)], {"axes": [1]}, 1)
    check("ReduceLogSumExp", [rng.uniform(200, 400, (50, 3)).astype(np.float32)], {"axes": [0]}, 1)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    x[1, :] = -np.inf
    x[2, 3] = -np.inf
    check("ReduceLogSumExp", [x], {"axes": [1]}, 1)


def test_max_min_propagate_nan(rng):
    x = rng.standard_normal((5, 40)).astype(np.float32)
    x[1, 7] = x[3, 39] = np.nan
    for op in ("ReduceMax", "ReduceMin"):
        check(op, [x], {"axes": [1]}, 1)
        check(op, [x], {"axes": [0]}, 1)


def test_axes_as_a_constant_input(rng):
    x = _data(rng, "ReduceSum", (3, 4, 5))
    check("ReduceSum", [x, np.array([0, 2], np.int64)], {}, 1, constant=(1,))


# -- ArgMax / ArgMin / Hardmax -------------------------------------------------------------------


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg(op, threads, rng):
    ties = rng.integers(0, 3, size=(5, 4, 7, 300)).astype(np.int32)  # ties everywhere; inner > a tile
    for x in (
        rng.standard_normal((3, 4, 5, 6)).astype(np.float32),
        ties[:, :, :, :9],
        ties,
        rng.standard_normal((2, 1, 9)),
        rng.standard_normal((11,)).astype(np.float32),
    ):
        for axis, keep, last in itertools.product(range(-x.ndim, x.ndim), (0, 1), (0, 1)):
            check(op, [x], {"axis": axis, "keepdims": keep, "select_last_index": last}, threads)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_arg_dtypes_and_nan(dtype, rng):
    x = rng.integers(-3, 4, size=(6, 5, 4)).astype(dtype)
    for op, axis, last in itertools.product(("ArgMax", "ArgMin"), range(3), (0, 1)):
        check(op, [x], {"axis": axis, "select_last_index": last}, 1)
    if dtype.startswith("float"):
        x[2, 1, 0] = x[2, 3, 0] = np.nan
        for op, last in itertools.product(("ArgMax", "ArgMin"), (0, 1)):
            check(op, [x], {"axis": 1, "select_last_index": last}, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_arg_of_long_rows(dtype, rng):  # lanes across the row, then the lanes' winners and the tail
    for shape in [(3, 1500), (2, 1024), (1, 4, 700), (40, 1500)]:  # the last: rows shared by threads
        x = rng.integers(-3, 4, size=shape).astype(dtype)
        if dtype.startswith("float"):
            rows = x.reshape(-1, x.shape[-1])
            rows[0, 37] = rows[0, 600] = rows[-1, -1] = np.nan
        for op, last, threads in itertools.product(("ArgMax", "ArgMin", "Hardmax"), (0, 1), THREADS):
            if op == "Hardmax" and (last or not dtype.startswith("float")):
                continue
            attrs = {"axis": -1} if op == "Hardmax" else {"axis": -1, "select_last_index": last}
            check(op, [x], attrs, threads)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardmax(dtype, rng):
    for x in (
        rng.standard_normal((3, 4, 5)).astype(dtype),
        rng.integers(0, 3, (4, 6, 300)).astype(dtype),
        rng.standard_normal((64, 10, 100)).astype(dtype),
    ):
        for axis in range(-3, 3):
            for threads in THREADS:
                check("Hardmax", [x], {"axis": axis}, threads)


# -- CumSum / CumProd ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
def test_cumulative(op, dtype, rng):
    for shape in [(7,), (3, 4, 5), (2, 1, 300, 3), (4, 1000, 9)]:
        x = _data(rng, op, shape, dtype)
        for axis, exclusive, reverse in itertools.product(range(-len(shape), len(shape)), (0, 1), (0, 1)):
            for threads in THREADS:
                check(op, [x], {"axis": axis, "exclusive": exclusive, "reverse": reverse}, threads)


def test_cumulative_axis_as_a_constant_input(rng):
    x = _data(rng, "CumSum", (3, 4, 5))
    check("CumSum", [x, np.array(1, np.int64)], {"reverse": 1}, 1, constant=(1,))


# -- TopK ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_topk(dtype, threads, rng):
    for x in (
        _data(rng, "TopK", (3, 4, 17), dtype),
        rng.integers(0, 4, (5, 33, 6)).astype(dtype),
        _data(rng, "TopK", (2, 3000), dtype),
        _data(rng, "TopK", (9,), dtype),
        _data(rng, "TopK", (40, 900), dtype),
    ):  # the last: rows shared by threads
        for axis in range(-x.ndim, x.ndim):
            n = x.shape[axis]
            for k, largest in itertools.product(sorted({0, 1, min(3, n), n}), (0, 1)):
                check("TopK", [x], {"k": k, "axis": axis, "largest": largest}, threads)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_bool_any_and_all(op, rng):
    for shape, axes in [((4, 5), [1]), ((3, 40, 7), [0, 2]), ((6, 300), []), ((2, 0, 3), [1])]:
        x = rng.random(shape) > 0.7
        for keep, threads in itertools.product((0, 1), THREADS):
            check(op, [x], {"axes": axes, "keepdims": keep}, threads)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "uint32", "uint64"])
def test_topk_integer_dtypes(dtype, rng):
    x = rng.integers(0, 9, (4, 7, 5)).astype(dtype)
    for axis, largest in itertools.product(range(3), (0, 1)):
        check("TopK", [x], {"k": 3, "axis": axis, "largest": largest}, 1)


# -- LpNormalization, LRN, GlobalLpPool ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lp_normalization(dtype, rng):
    for x in (
        rng.standard_normal((3, 4, 5)).astype(dtype),
        rng.standard_normal((2, 300, 37)).astype(dtype),
        rng.standard_normal((4, 1000)).astype(dtype),
        rng.standard_normal((64, 2000)).astype(dtype),
    ):
        x[0, 0] = 0  # a zero norm gives 0
        for axis, p, threads in itertools.product(range(-x.ndim, x.ndim), (1, 2), THREADS):
            check("LpNormalization", [x], {"axis": axis, "p": p}, threads)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lrn(dtype, rng):
    for shape in [(2, 5, 3, 3), (1, 7, 20, 20), (2, 3, 4), (1, 16, 1, 1), (2, 16, 40, 40)]:
        x = rng.standard_normal(shape).astype(dtype)
        for size, beta, threads in itertools.product((1, 2, 3, 5, 8), (0.75, 0.6), THREADS):
            check("LRN", [x], {"size": size, "alpha": 0.3, "beta": beta, "bias": 2.0}, threads)


def test_global_lp_pool(rng, dtype="float32"):  # (the op takes float32 and float16)
    for shape in [
        (1, 3, 7, 7),
        (2, 4, 5, 9),
        (2, 3, 11),
        (1, 2, 3, 5, 7),
        (2, 64, 40, 40),
        (0, 2, 3),
        (1, 1, 300, 300),
    ]:  # the last: one output, its plane cut into parts
        x = rng.standard_normal(shape).astype(dtype)
        for p, threads in itertools.product((1, 2, 3), THREADS):
            check("GlobalLpPool", [x], {"p": p}, threads)


# -- LayerNormalization with broadcast scale and bias (ops_norm.py -> csrc/reduce/layernorm.c) --------


def test_layernorm_broadcast_params(rng, dtype="float32"):  # (the op takes float32 and 16-bit floats)
    x = rng.standard_normal((2, 3, 4, 5)).astype(dtype)
    params = [None, (5,), (4, 1), (3, 1, 1), (1, 4, 5), (3, 4, 5), (1,), (3, 1, 5)]
    for axis in (1, -1, 2):
        normalized = x.shape[axis % 4 :]
        fits = [p for p in params if p is None or np.broadcast_shapes(p, normalized) == normalized]
        for s, b in itertools.product(fits, fits):
            scale = None if s is None else rng.uniform(0.5, 1.5, s).astype(dtype)
            bias = None if b is None else rng.standard_normal(b).astype(dtype)
            for constant in ((), (1, 2)):
                check("LayerNormalization", [x, scale, bias], {"axis": axis}, 1, constant=constant)


@pytest.mark.parametrize("threads", THREADS)
def test_layernorm_broadcast_large(threads, rng):
    x = (rng.standard_normal((64, 48, 96)) * 3 + 1).astype(np.float32)
    check(
        "LayerNormalization",
        [x, rng.uniform(0.5, 1.5, (48, 1)).astype(np.float32), rng.standard_normal((96,)).astype(np.float32)],
        {"axis": 1},
        threads,
    )
    check(
        "LayerNormalization",
        [x, rng.uniform(0.5, 1.5, (96,)).astype(np.float64).astype(np.float32), None],
        {"axis": -1, "epsilon": 1e-3},
        threads,
    )


def test_along_axis_ops_of_empty_tensors(rng):
    check("ArgMax", [rng.standard_normal((0, 5)).astype(np.float32)], {"axis": 1}, 1)
    check("Hardmax", [rng.standard_normal((0, 5)).astype(np.float32)], {"axis": 1}, 1)
    check("TopK", [rng.standard_normal((0, 5)).astype(np.float32)], {"k": 2, "axis": 1}, 1)
    check("LpNormalization", [rng.standard_normal((0, 5)).astype(np.float32)], {"axis": 1}, 1)
    for shape, axis in [((0, 3), 0), ((3, 0), 1), ((3, 0), 0)]:
        check("CumSum", [rng.standard_normal(shape).astype(np.float32)], {"axis": axis}, 1)


# -- GlobalAveragePool / GlobalMaxPool of any number of spatial axes (ops_pool.py) ------------------


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools_of_any_rank(op, rng):
    for shape in [(2, 3, 11), (1, 4, 1), (1, 2, 3, 5, 7), (2, 1, 1, 3, 1), (2, 16, 5, 9), (1, 64, 40, 40)]:
        for threads in THREADS:
            check(op, [rng.standard_normal(shape).astype(np.float32)], {}, threads)


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
def test_mean_of_short_rows_on_each_isa(isa, rng):
    """ReduceMean over a global pool's planes takes _x86's row mean (float32 lanes) where its rows are short."""
    from mnn_x86 import isa as x86_isa

    if isa not in x86_isa.supported():
        pytest.skip(f"this CPU does not run {isa}")
    for shape in [(2, 64, 7, 7), (1, 32, 14, 14), (1, 8, 16, 16), (3, 5, 1, 3)]:
        x = rng.uniform(0, 10, shape).astype(np.float32)  # after a ReLU: no cancellation to hide behind
        graph, feeds = one_op_graph("ReduceMean", [x], {"axes": [2, 3]})
        sess = Session(graph, backend="x86", fallback=False, optimize=False, options={"x86.isa": isa})
        want = run_reference("ReduceMean", [x], {"axes": [2, 3]})[0]
        np.testing.assert_allclose(sess.run(feeds)["out"], want, rtol=1e-6, atol=0)

"""ArgMax / ArgMin, TopK and CumSum / CumProd (csrc/select.c) on random inputs of several shapes (odd
sizes, the axis first, middle and last, inner runs that are not multiples of 4), with ties and NaN, in
float32, int32 and int64, against the reference backend: indices and integer results exactly, float32
scans bit-exact (the same sequential order), at 1 and 3 threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_arm_bit_exact, needs_arm

from mnn_core.testing import conformance_graph

RNG = np.random.default_rng(23)


def data(shape, dtype="float32", ties=False, nan=False):
    if ties:
        x = RNG.integers(-3, 4, shape)
    elif dtype == "float32":
        x = RNG.standard_normal(shape)
    else:
        x = RNG.integers(-1000, 1000, shape)
    x = np.asarray(x).astype(dtype)
    if nan:
        flat = x.reshape(-1)
        flat[RNG.choice(flat.size, max(1, flat.size // 7), replace=False)] = np.nan
    return x


def _cases():
    c = []
    for op in ("ArgMax", "ArgMin"):
        for shape, axis, keep, last in [
            ((7, 13), 1, 1, 0),
            ((5, 9, 6), 0, 0, 0),
            ((3, 11, 5), -2, 1, 1),
            ((2, 3, 4, 17), 3, 0, 1),
            ((1001,), 0, 0, 0),
        ]:
            attrs = {"axis": axis, "keepdims": keep, "select_last_index": last}
            c.append((op, [data(shape)], attrs))
            c.append((op, [data(shape, ties=True)], attrs))
            c.append((op, [data(shape, "int32", ties=True)], attrs))
            c.append((op, [data(shape, "int64")], attrs))
            c.append((op, [data(shape, nan=True)], attrs))
    for shape, axis, k, largest in [
        ((7, 13), 1, 5, 1),
        ((9, 6, 5), 0, 9, 0),
        ((3, 11, 7), -2, 1, 1),
        ((4, 33), -1, 33, 0),
        ((2, 3, 301), 2, 7, 1),
        ((5, 4), 1, 0, 1),
    ]:
        attrs = {"k": k, "axis": axis, "largest": largest}
        c.append(("TopK", [data(shape)], attrs))
        c.append(("TopK", [data(shape, ties=True)], attrs))
        c.append(("TopK", [data(shape, "int64", ties=True)], attrs))
        c.append(("TopK", [data(shape, "int32")], attrs))
        c.append(("TopK", [data(shape, nan=True)], attrs))
    for op in ("CumSum", "CumProd"):
        for shape, axis, excl, rev in [
            ((13,), 0, 0, 0),
            ((5, 9, 7), 1, 1, 0),
            ((3, 17), -1, 0, 1),
            ((6, 5, 3), 0, 1, 1),
            ((2, 31, 9), 1, 0, 0),
        ]:
            attrs = {"axis": axis, "exclusive": excl, "reverse": rev}
            scale = 0.5 if op == "CumProd" else 1.0
            c.append((op, [(data(shape) * scale + (1.0 if op == "CumProd" else 0.0)).astype(np.float32)], attrs))
            c.append((op, [data(shape, "int32")], attrs))
            c.append((op, [data(shape, "int64")], attrs))
    return c


CASES = _cases()


@needs_arm
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0]}-{i}")
def test_select_ops_match_the_reference(case):
    op, ins, attrs = CASES[case]
    from mnn_core.ops import all_schemas

    attrs = {**{k: a.default for k, a in all_schemas()[op].attrs.items() if a.default is not None}, **attrs}
    graph, feeds = conformance_graph(op, ins, attrs, False)
    assert_arm_bit_exact(graph, feeds, f"{op} {attrs}")


@needs_arm
def test_large_rows_split_over_threads():
    """Enough rows to be split: the same bits at 1, 2 and 3 threads."""
    from mnn_core import Session

    x = data((64, 37, 29))
    for op, attrs in [
        ("ArgMax", {"axis": 1, "keepdims": 1, "select_last_index": 0}),
        ("TopK", {"k": 4, "axis": 1, "largest": 1, "sorted": 1}),
        ("CumSum", {"axis": 1, "exclusive": 0, "reverse": 0}),
    ]:
        graph, feeds = conformance_graph(op, [x], attrs, False)
        want = Session(graph, backend="reference").run(dict(feeds))
        for threads in (1, 2, 3):
            got = Session(graph, backend="arm", fallback=False, threads=threads).run(dict(feeds))
            for key, ref in want.items():
                np.testing.assert_array_equal(got[key], ref, err_msg=f"{op} threads={threads}")

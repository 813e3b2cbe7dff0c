"""Graphs whose loops follow the data, for the GPU backends' tests of Mesa's loop budget
(mnn_core.backend.kit.loops: llvmpipe and lavapipe end an invocation's loops after 65535 passes in
all, without an error). A kernel must run such a graph to the end, matching the reference, or
decline it with the reason; `LONG` is just past the budget and odd."""

from __future__ import annotations

import numpy as np

LONG = 70001


def rand(shape: tuple, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def compare(backend: str, graph, feeds: dict, rtol: float = 1e-3, atol: float = 1e-2) -> None:
    """Run `graph` on `backend` (fallback off) and on the reference; every output must match."""
    import mnn_core as mnn

    want = mnn.Session(graph, backend="reference").run(feeds)
    got = mnn.Session(graph, backend=backend, fallback=False).run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=atol, err_msg=f"{name} on {backend}")


def skip_without_budget(loop_budget, what: str) -> None:
    """Skip a test of what is declined past the budget where `loop_budget()` says there is none."""
    import pytest

    if loop_budget() is None:
        pytest.skip(f"this {what} has no loop budget (not llvmpipe or lavapipe)")


def matmul(a_shape: tuple, b_shape: tuple):
    """A MatMul over a long K, whose last product decides the result; (graph, feeds)."""
    import mnn_core as mnn

    b = mnn.GraphBuilder("long_matmul")
    b.output(b.MatMul(b.input("a", a_shape), b.input("b", b_shape)), "y")
    feeds = {"a": rand(a_shape, 1), "b": rand(b_shape, 2)}
    feeds["a"][..., -1] = 100.0
    return b.build(), feeds


def gemm(trans_a: int, trans_b: int, m: int = 2, n: int = 3):
    """A Gemm over K = LONG with alpha and beta; (graph, feeds)."""
    import mnn_core as mnn

    b = mnn.GraphBuilder("long_gemm")
    a_shape = (LONG, m) if trans_a else (m, LONG)
    w_shape = (n, LONG) if trans_b else (LONG, n)
    a, w, c = b.input("a", a_shape), b.input("b", w_shape), b.input("c", (n,))
    b.output(b.Gemm(a, w, c, transA=trans_a, transB=trans_b, alpha=0.5, beta=2.0), "y")
    return b.build(), {"a": rand(a_shape, 3), "b": rand(w_shape, 4), "c": rand((n,), 5)}


def softmax(op: str, shape: tuple, axis: int):
    """Softmax or LogSoftmax along `axis`; (graph, feeds)."""
    import mnn_core as mnn

    b = mnn.GraphBuilder("long_softmax")
    b.output(getattr(b, op)(b.input("x", shape), axis=axis), "y")
    return b.build(), {"x": rand(shape, 8) * 4}


def wide_pool():
    """A MaxPool whose one window (300 x 300) is past the budget: declined as "this MaxPool takes"."""
    import mnn_core as mnn

    b = mnn.GraphBuilder("wide_pool")
    b.output(b.MaxPool(b.input("x", (1, 1, 300, 300)), kernel_shape=[300, 300]), "y")
    return b.build()

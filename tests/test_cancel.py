"""Stopping a run: Session.run(timeout=), a CancelToken, Session.cancel(); compiled and eager graphs."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core import CancelToken, RunCancelled, RunTimeout
from mnn_core.graph.builder import GraphBuilder
from mnn_core.graph.ir import Graph, Node, TensorInfo


def _slow_graph(steps: int = 300, n: int = 192) -> Graph:
    """A chain of matmuls long enough (tens of ms) to stop in the middle."""
    rng = np.random.default_rng(0)
    b = GraphBuilder("chain")
    x = b.input("x", (n, n))
    w = b.const(rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n))
    for _ in range(steps):
        x = b.op("Tanh", b.op("MatMul", x, w))
    b.output(x)
    return b.build()


def _feeds(n: int = 192) -> dict:
    return {"x": np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)}


def test_timeout_stops_between_ops_and_session_stays_usable():
    sess = mnn.Session(_slow_graph(), backend="reference")
    full = sess.run(_feeds())  # plans; the reference is slow enough per op
    t0 = time.perf_counter()
    with pytest.raises(RunTimeout, match=r"run timed out before step .* of \d+"):
        sess.run(_feeds(), timeout=0.01)
    assert time.perf_counter() - t0 < 2.0
    again = sess.run(_feeds())
    np.testing.assert_array_equal(again[sess.output_names[0]], full[sess.output_names[0]])
    assert isinstance(RunTimeout("x"), TimeoutError)


def test_cancel_token_from_another_thread():
    sess = mnn.Session(_slow_graph(), backend="reference")
    sess.run(_feeds())
    token = CancelToken()
    timer = threading.Timer(0.02, token.cancel)
    timer.start()
    with pytest.raises(RunCancelled, match="run cancelled before step"):
        sess.run(_feeds(), cancel=token)
    timer.join()
    assert token.cancelled
    with pytest.raises(RunCancelled):  # a cancelled token stays cancelled
        sess.run(_feeds(), cancel=token)


def test_session_cancel_stops_the_run_in_progress():
    sess = mnn.Session(_slow_graph(), backend="reference")
    sess.run(_feeds())
    assert sess.cancel() is False  # nothing running
    errors = []

    def run():
        try:
            sess.run(_feeds())
        except RunCancelled as exc:
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 5
    while sess._limits is None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert sess.cancel() is True
    t.join(10)
    assert len(errors) == 1


def test_bad_arguments():
    sess = mnn.Session(_slow_graph(2, 8), backend="reference")
    with pytest.raises(ValueError, match="positive"):
        sess.run(_feeds(8), timeout=0)
    with pytest.raises(TypeError, match="CancelToken"):
        sess.run(_feeds(8), cancel=True)


def _endless_loop() -> Graph:
    """An eager graph: a Loop with no trip count whose condition stays true."""
    body = Graph(name="body")
    body.inputs["i"] = TensorInfo((), "int64")
    body.inputs["c"] = TensorInfo((), "bool")
    body.inputs["v"] = TensorInfo((1,), "float32")
    body.nodes += [Node("Identity", ["c"], ["c_out"], {}, "keep"), Node("Neg", ["v"], ["v_out"], {}, "neg")]
    body.outputs = ["c_out", "v_out"]
    g = Graph(name="endless")
    g.inputs["v"] = TensorInfo((1,), "float32")
    g.initializers["cond"] = np.array(True)
    g.nodes.append(Node("Loop", ["", "cond", "v"], ["out"], {"body": body}, "loop"))
    g.outputs = ["out"]
    return g


def test_timeout_stops_an_eager_loop():
    sess = mnn.Session(_endless_loop(), backend="reference", max_loop_iterations=10**9)
    assert sess.eager
    t0 = time.perf_counter()
    with pytest.raises(RunTimeout, match="node"):
        sess.run({"v": np.ones(1, np.float32)}, timeout=0.2)
    assert time.perf_counter() - t0 < 3.0

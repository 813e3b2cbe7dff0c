"""Session.run's fast path: a run whose input arrays match the last checked run's (dict of
ndarrays, same names, dtypes and shapes) skips the checks and binds them in one compiled call.
Each test runs the same inputs through a fresh session (the checked path) to compare."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_test_graphs import numpy_small_cnn, small_cnn

import mnn_core as mnn
import mnn_core.ops  # noqa: F401  (small_cnn reads mnn.ops)
from mnn_core.graph.ir import Graph, Node, TensorInfo

BACKENDS = ["reference"] + [b for b in ("x86",) if b in [x.name for x in mnn.backends()]]


def _add_graph(shape=(3, 5)) -> Graph:
    g = Graph()
    g.inputs = {"a": TensorInfo(shape, "float32"), "b": TensorInfo(shape, "float32")}
    g.nodes = [Node("Add", ["a", "b"], ["y"], name="add")]
    g.outputs = ["y"]
    return g


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_runs_match_fresh_sessions(rng, backend):
    graph = small_cnn(rng)
    sess = mnn.Session(graph, backend=backend)
    for batch in (2, 2, 1, 2, 2):
        x = rng.standard_normal((batch, 3, 8, 8)).astype("float32")
        np.testing.assert_allclose(sess.run({"x": x})["y"], numpy_small_cnn(graph, x), rtol=1e-4, atol=1e-4)
    assert sess._fast is not None and sess._fast.kinds[0][1] == (2, 3, 8, 8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_cast_and_fed_back_inputs(rng, backend):
    sess = mnn.Session(_add_graph(), backend=backend)
    a = rng.standard_normal((3, 5)).astype("float32")
    b = rng.standard_normal((3, 5)).astype("float32")
    for _ in range(2):
        np.testing.assert_allclose(sess.run({"a": a, "b": b})["y"], a + b, rtol=1e-6)
    wide = rng.standard_normal((3, 10)).astype("float32")
    for _ in range(2):  # not contiguous: copied, never read in place
        np.testing.assert_allclose(sess.run({"a": wide[:, ::2], "b": b})["y"], wide[:, ::2] + b, rtol=1e-6)
    a64 = rng.standard_normal((3, 5))
    for _ in range(2):  # float64 into float32: cast on the way in
        np.testing.assert_allclose(sess.run({"a": a64, "b": b})["y"], a64.astype("float32") + b, rtol=1e-6)
    y = sess.run({"a": a, "b": b}, copy=False)["y"]
    for _ in range(3):  # the last run's output view fed back: copied out of the arena first
        want = y + b
        y = sess.run({"a": y, "b": b}, copy=False)["y"]
        np.testing.assert_allclose(y, want, rtol=1e-6)


def test_changed_inputs_take_the_checked_path(rng):
    sess = mnn.Session(_add_graph(), backend="reference")
    a = np.ones((3, 5), "float32")
    sess.run({"a": a, "b": a})
    with pytest.raises(mnn.InputError):
        sess.run({"a": a})
    with pytest.raises(mnn.InputError):
        sess.run({"a": a, "b": a, "c": a})
    with pytest.raises(mnn.InputError):
        sess.run({"a": a, "b": np.ones((3, 5), "int32")})
    np.testing.assert_array_equal(sess.run({"a": a.tolist(), "b": a})["y"], 2 * a)  # a list: checked path
    np.testing.assert_array_equal(sess.run({"a": a, "b": a})["y"], 2 * a)


def test_cancel_then_run_again(rng):
    sess = mnn.Session(_add_graph(), backend="reference")
    a = np.ones((3, 5), "float32")
    sess.run({"a": a, "b": a})
    sess._idle_limits.token.cancel()  # as cancel() does to the run holding the idle token
    np.testing.assert_array_equal(sess.run({"a": a, "b": a})["y"], 2 * a)
    assert not sess._idle_limits.token.cancelled

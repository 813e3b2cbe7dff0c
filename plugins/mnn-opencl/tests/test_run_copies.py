"""A run's host copies as C executions (csrc/cl_transfer.c; opencl.run_copies=c, the default): the upload
reads the caller's array itself (no copy into the host arena first), the download writes the host arena; both
against the reference backend, bit for bit, in several dtypes, batches that re-plan and an empty one;
a run with a fresh array each time reads that array; the Python steps are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_opencl

import mnn_core as mnn

pytestmark = needs_opencl
C_COPIES = {"opencl.run_copies": "c"}


def copy_graph():
    """Outputs that are exact functions of the inputs (negation, doubling) in three dtypes."""
    b = mnn.GraphBuilder("cl_copies")
    x = b.input("x", ("N", 3, 5, 7))
    i = b.input("i", ("N", 9), dtype="int64")
    j = b.input("j", ("N", 9), dtype="int32")
    b.output(b.Neg(x), "neg")
    b.output(b.Add(i, i), "twice64")
    b.output(b.Add(j, j), "twice32")
    return b.build()


def feeds_for(rng, n):
    return {
        "x": rng.standard_normal((n, 3, 5, 7)).astype("float32"),
        "i": rng.integers(-(2**40), 2**40, (n, 9)),
        "j": rng.integers(-(2**30), 2**30, (n, 9)).astype("int32"),
    }


def assert_exact(sess, ref, feeds):
    got, want = sess.run(feeds), ref.run(feeds)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_copies_in_c_are_exact_and_read_the_callers_array(rng):
    graph = copy_graph()
    ref = mnn.Session(graph, backend="reference")
    sess = mnn.Session(graph, backend="opencl", fallback=False, options=C_COPIES)
    for n in (1, 4, 3, 16, 0):  # re-plans, an empty batch
        assert_exact(sess, ref, feeds_for(rng, n))
    assert set(sess._current.move_index) == {"x", "i", "j"}  # no copy of the inputs into the arena
    for _ in range(3):  # a new array every run: each run reads the one it is given
        assert_exact(sess, ref, feeds_for(rng, 5))
    sess.run(feeds_for(rng, 2), profile=True)
    steps = [name for name, _ in sess.profile()]
    assert sum(s.startswith("copy:") for s in steps) == 6, steps


def test_copies_in_c_of_a_model(rng):
    """A convolution, a residual and a Relu: the outputs as with the core's Python copies."""
    b = mnn.GraphBuilder("cl_conv_copies")
    x = b.input("x", ("N", 5, 9, 7))
    w = b.const(rng.uniform(-1, 1, (5, 5, 3, 3)).astype("float32"), "w")
    b.output(b.Relu(b.Add(b.Conv(x, w, pads=[1, 1, 1, 1]), x)), "y")
    graph = b.build()
    feeds = {"x": rng.standard_normal((3, 5, 9, 7)).astype("float32")}
    got = mnn.Session(graph, backend="opencl", fallback=False, options=C_COPIES).run(feeds)["y"]
    python = {"opencl.run_copies": "python"}
    before = mnn.Session(graph, backend="opencl", fallback=False, options=python).run(feeds)["y"]
    np.testing.assert_array_equal(got, before)
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_copies_in_c_are_the_default_and_python_ones_still_work(rng):
    graph = copy_graph()
    default = mnn.Session(graph, backend="opencl", fallback=False)
    default.run(feeds_for(rng, 2))
    assert set(default._current.move_index) == {"x", "i", "j"}
    sess = mnn.Session(graph, backend="opencl", fallback=False, options={"opencl.run_copies": "python"})
    assert_exact(sess, mnn.Session(graph, backend="reference"), feeds_for(rng, 3))
    assert sess._current.move_index == {}


def test_a_bad_setting_names_the_option():
    with pytest.raises(Exception, match="opencl.run_copies must be c or python"):
        mnn.Session(copy_graph(), backend="opencl", fallback=False, options={"opencl.run_copies": "fast"}).run(
            feeds_for(np.random.default_rng(0), 1)
        )

"""Reductions longer than one invocation may loop on llvmpipe (it ends a loop nest after 65535
iterations, silently): a work group shares each output's reduction, the global pools' too. Checked
against the reference on random inputs with odd sizes past each group-size step."""

import numpy as np
import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn

pytestmark = needs_opengl


@pytest.mark.parametrize(
    "shape, axes", [((70001,), [0]), ((3, 40009), [1]), ((2, 263, 1001), [1, 2]), ((5, 4097, 3), [1])]
)
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"])
def test_long_reduction_matches_reference(op, shape, axes):
    b = mnn.GraphBuilder("long_reduce")
    x = b.input("x", shape)
    b.output(getattr(b, op)(x, axes=axes, keepdims=0), "y")
    graph = b.build()
    xv = np.random.default_rng(5).standard_normal(shape).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    got = mnn.Session(graph, backend="opengl", fallback=False).run({"x": xv})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 3, 256, 257), (1, 2, 70001), (2, 3, 5, 7)])
@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool_over_a_large_window_matches_reference(op, shape):
    b = mnn.GraphBuilder("global_pool")
    x = b.input("x", shape)
    b.output(getattr(b, op)(x), "y")
    graph = b.build()
    xv = np.random.default_rng(6).standard_normal(shape).astype("float32")
    xv.reshape(shape[0], shape[1], -1)[..., -1] = 50.0  # the last element decides the max
    want = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    got = mnn.Session(graph, backend="opengl", fallback=False).run({"x": xv})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

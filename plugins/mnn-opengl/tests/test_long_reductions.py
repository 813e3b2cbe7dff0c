"""Reductions longer than one invocation may loop on llvmpipe (it ends a loop nest after 65535
iterations, silently): a work group shares each output's reduction. Checked against the reference
on random inputs with odd sizes past each group-size step."""

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

"""gemv.comp: a classifier's Gemm (few rows, transposed weights) on a GPU, one work
group per output column, against the reference: odd sizes, every row count up to 8,
bias broadcast along either axis, alpha/beta, a fused activation, batched MatMul."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan

GPU = {"vulkan.gpu_tiling": True}  # the choices a discrete GPU makes: gemv for these shapes


def _segment_shaders(sess):
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}  # fused nodes ("a+b") included
    return [s for s in mnn_vulkan.segments().values() if s.names and set(s.names) <= names][-1].shaders


@pytest.mark.parametrize("m", [1, 3, 8])
@pytest.mark.parametrize("bias_shape", [(77,), (1, 77), "rows"])
def test_classifier_gemm_uses_gemv_and_matches(rng, m, bias_shape):
    k, n = 301, 77
    bshape = (m, 1) if bias_shape == "rows" else bias_shape
    b = mnn.GraphBuilder()
    x = b.input("x", (m, k))
    w = b.const(rng.standard_normal((n, k)).astype("float32"))
    c = b.const(rng.standard_normal(bshape).astype("float32"))
    b.output(b.Relu(b.Gemm(x, w, c, transB=1, alpha=0.5, beta=2.0)), "y")
    graph = b.build()
    x = rng.standard_normal((m, k)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options=GPU)
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=1e-4)
    assert "gemv" in _segment_shaders(sess)


def test_batched_matmul_through_gemv(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 2, 5, 130))
    w = b.const(rng.standard_normal((2, 130, 9)).astype("float32"))
    b.output(b.MatMul(x, w), "y")
    graph = b.build()
    x = rng.standard_normal((3, 2, 5, 130)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.gemv": True})
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=1e-4)
    assert "gemv" in _segment_shaders(sess)


def test_many_rows_keep_the_tiled_gemm(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (9, 100))
    b.output(b.Gemm(x, b.const(rng.standard_normal((40, 100)).astype("float32")), None, transB=1), "y")
    sess = mnn.Session(b.build(), backend="vulkan", fallback=False, options=GPU)
    sess.run({"x": rng.standard_normal((9, 100)).astype("float32")})
    assert "gemv" not in _segment_shaders(sess)

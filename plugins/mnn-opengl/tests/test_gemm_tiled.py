"""MatMul on the tiled convolution (conv_tiled.gemm) against the reference on random inputs: B
shared by every batch (A's batches become rows), batched alike with A, odd sizes, a 1-D B, a
fused activation, split-K and a long K; and the shapes it leaves to matmul.comp."""

import numpy as np
import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn

pytestmark = needs_opengl

TILED = {"opengl.gemm_path": "tiled"}


def _matmul(a_shape, b_shape, options, activation=None, rtol=1e-4):
    b = mnn.GraphBuilder("gemm_tiled")
    a, bb = b.input("a", a_shape), b.input("b", b_shape)
    y = b.MatMul(a, bb)
    if activation:
        y = getattr(b, activation)(y)
    b.output(y, "y")
    graph = b.build()
    rng = np.random.default_rng(7)
    feeds = {"a": rng.standard_normal(a_shape).astype("float32"), "b": rng.standard_normal(b_shape).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    got = mnn.Session(graph, backend="opengl", fallback=False, options=options).run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((37, 19), (19, 23)),
        ((3, 4, 9, 33), (33, 21)),  # B shared: 108 rows
        ((6, 10, 17), (6, 17, 70)),  # batched alike: 6 groups
        ((2, 3, 11, 5), (2, 3, 5, 9)),
        ((65, 31), (31,)),  # 1-D B
        ((1, 33), (33, 20)),  # one row: matmul.comp
        ((4, 9, 8), (1, 8, 5)),  # B broadcast over a batch dim of 1
        ((1, 9, 8), (4, 8, 5)),  # A broadcast: matmul.comp
    ],
)
@pytest.mark.parametrize("options", [TILED, {**TILED, "opengl.splitk": 3}, {"opengl.gpu_tiling": True}])
def test_tiled_matmul_matches_reference(a_shape, b_shape, options):
    _matmul(a_shape, b_shape, options, activation="Relu")


def test_tiled_matmul_with_a_long_k():
    _matmul((9, 19000), (19000, 10), TILED, rtol=1e-3)

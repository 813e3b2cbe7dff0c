"""copies.py: Transposes and Slices that take the tiled transpose (copy_tile_t) or the 4-float row copy
(copy_rows4), against the reference backend on odd sizes and batches, and with opencl.copy_tiles=off."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo

pytestmark = needs_opencl


def _transpose(shape, perm):
    return Graph(
        inputs={"x": TensorInfo(shape, "float32")},
        initializers={},
        nodes=[Node("Transpose", ["x"], ["y"], {"perm": list(perm)}, "t")],
        outputs=["y"],
    )


@pytest.mark.parametrize(
    "shape, perm, kernel",
    [
        ((3, 37, 45), (0, 2, 1), "copy_tile_t"),  # NCHW -> NHWC, flattened HW; neither side a multiple of 32
        ((2, 9, 7, 11), (0, 2, 3, 1), "copy_tile_t"),  # NCHW -> NHWC
        ((2, 13, 5, 9), (0, 3, 1, 2), "copy_tile_t"),  # NHWC -> NCHW
        ((64, 33), (1, 0), "copy_tile_t"),  # a plain matrix
        ((2, 3, 9, 40), (1, 0, 3, 2), "copy_tile_t"),  # two other dims that do not merge
        ((2, 3, 17, 8), (1, 0, 2, 3), "copy_rows4"),  # whole rows of 8 moved
        ((2, 7, 3, 5, 12), (2, 0, 3, 1, 4), "copy_rows4"),  # ViT's qkv split: (B, N, 3, H, D) -> (3, B, H, N, D)
        ((2, 3, 8), (0, 1, 2), "copy_rows4"),  # one contiguous run (the q, k, v slabs of a split)
        ((2, 3, 5), (0, 1, 2), "copy_strided"),  # one run of 30: not a multiple of 4
        ((3, 5, 4, 6), (0, 2, 1, 3), "copy_strided"),  # rows of 6: not a multiple of 4
        ((3, 4, 5), (0, 2, 1), "copy_strided"),  # a side under 8
    ],
)
def test_copy_kernels_match_reference(rng, shape, perm, kernel):
    graph = _transpose(shape, perm)
    feeds = {"x": rng.standard_normal(shape).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    got = mnn.Session(graph, backend="opencl", fallback=False, optimize=False).run(feeds)["y"]
    assert kernel in opencl_backend().segments[-1]["kernels"]
    np.testing.assert_array_equal(got, want)
    off = mnn.Session(graph, backend="opencl", fallback=False, optimize=False, options={"opencl.copy_tiles": "off"})
    np.testing.assert_array_equal(off.run(feeds)["y"], want)
    assert "copy_strided" in opencl_backend().segments[-1]["kernels"]


def _transpose_add(shape, perm, swap: bool, reread: bool):
    """y = Transpose(x) + r (or r + Transpose(x)); `reread`: the transpose is also an output (no fusion)."""
    out_shape = tuple(shape[p] for p in perm)
    add_inputs = ["r", "t"] if swap else ["t", "r"]
    return Graph(
        inputs={"x": TensorInfo(shape, "float32"), "r": TensorInfo(out_shape, "float32")},
        initializers={},
        nodes=[
            Node("Transpose", ["x"], ["t"], {"perm": list(perm)}, "t"),
            Node("Add", add_inputs, ["y"], {}, "add"),
        ],
        outputs=["y", "t"] if reread else ["y"],
    ), out_shape


@pytest.mark.parametrize(
    "shape, perm, swap, reread, kernel",
    [
        ((2, 9, 7, 11), (0, 3, 1, 2), False, False, "copy_tile_t"),  # ConvNeXt's NHWC -> NCHW and residual
        ((3, 37, 45), (0, 2, 1), True, False, "copy_tile_t"),  # the residual first
        ((2, 3, 5, 8), (1, 0, 2, 3), False, False, "binary_bcast"),  # rows moved whole: no tile
        ((2, 9, 7, 11), (0, 3, 1, 2), False, True, None),  # the transpose read elsewhere too: not fused
    ],
)
def test_transpose_add_matches_reference(rng, shape, perm, swap, reread, kernel):
    graph, out_shape = _transpose_add(shape, perm, swap, reread)
    feeds = {"x": rng.standard_normal(shape).astype("float32"), "r": rng.standard_normal(out_shape).astype("float32")}
    want = mnn.Session(graph, backend="reference").run(feeds)
    for options in ({}, {"opencl.copy_tiles": "off"}):
        sess = mnn.Session(graph, backend="opencl", fallback=False, optimize=False, options=options)
        got = sess.run(feeds)
        assert sess.plan.fused == ({} if kernel is None else {"t+add": ["t", "add"]})
        if kernel is not None:
            used = "binary_bcast" if options else kernel
            assert used in opencl_backend().segments[-1]["kernels"]
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6)

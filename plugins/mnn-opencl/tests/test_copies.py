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

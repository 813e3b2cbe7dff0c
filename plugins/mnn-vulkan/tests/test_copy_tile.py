"""copy_tile_t.comp (transposes through 32x32 tiles in shared memory; "vulkan.copy_tiles") against the
reference: ConvNeXt's NCHW <-> NHWC, odd sizes (partial tiles both ways), one and two outer axes, int32;
the transposes it leaves to copy.comp; the plan it makes of a copy's strides."""

from __future__ import annotations

import pytest
from vulkan_testing import check_vulkan, needs_vulkan

import mnn_core as mnn

ON = {"vulkan.copy_tiles": "1"}


def _transpose(rng, shape, perm, dtype="float32"):
    b = mnn.GraphBuilder()
    x = b.input("x", shape, dtype=dtype)
    b.output(b.Transpose(x, perm=list(perm)), "y")
    if dtype == "float32":
        data = rng.standard_normal(shape).astype(dtype)
    else:
        data = rng.integers(-1000, 1000, shape).astype(dtype)
    return b.build(), {"x": data}


@needs_vulkan
@pytest.mark.parametrize(
    "shape,perm",
    [
        ((2, 96, 7, 9), (0, 2, 3, 1)),  # NCHW -> NHWC: (2, 63, 96), partial tiles both ways
        ((2, 7, 9, 40), (0, 3, 1, 2)),  # NHWC -> NCHW
        ((33, 70), (1, 0)),  # a matrix, no outer axis
        ((3, 2, 17, 45), (1, 0, 3, 2)),  # two outer axes
        ((4, 40, 3, 36), (0, 2, 3, 1)),  # (4, 108, 40): rows past a tile
    ],
)
def test_transpose(rng, shape, perm):
    graph, feeds = _transpose(rng, shape, perm)
    assert "copy_tile_t" in check_vulkan(graph, feeds, ON, rtol=0)


@needs_vulkan
def test_int32(rng):
    graph, feeds = _transpose(rng, (3, 20, 37), (0, 2, 1), dtype="int32")
    assert "copy_tile_t" in check_vulkan(graph, feeds, ON, rtol=0)


@needs_vulkan
@pytest.mark.parametrize(
    "shape,perm,options",
    [
        ((2, 3, 16, 16), (1, 0, 2, 3), ON),  # the innermost axis stays contiguous
        ((2, 4, 16, 16), (0, 2, 3, 1), ON),  # 4 columns: below a tile's worth
        ((2, 16, 9, 9), (0, 2, 3, 1), {"vulkan.copy_tiles": "0"}),
        ((2, 16, 9, 9), (0, 2, 3, 1), {}),  # off by default
        ((2, 16, 9, 9), (0, 2, 3, 1), {"vulkan.copy_tiles": "gpu"}),  # lavapipe is no GPU
    ],
)
def test_left_to_copy(rng, shape, perm, options):
    graph, feeds = _transpose(rng, shape, perm)
    shaders = check_vulkan(graph, feeds, options, rtol=0)
    assert "copy" in shaders and "copy_tile_t" not in shaders, shaders


def test_plan():
    from mnn_vulkan.kernels.copy_tile import plan

    from mnn_core.backend.kit.layout import transpose_copy

    def planned(shape, perm):
        out, src, dst, _, _ = transpose_copy(shape, perm)
        return plan(out, src, dst)

    # ConvNeXt-T b16 stage 1: (16, 96, 56, 56) -> NHWC is (16, 3136, 96), rows contiguous in the source
    assert planned((16, 96, 56, 56), (0, 2, 3, 1)) == (3136, 96, 3136, 96, [16, 1], [301056, 0], [301056, 0])
    assert planned((16, 56, 56, 96), (0, 3, 1, 2)) == (96, 3136, 96, 3136, [16, 1], [301056, 0], [301056, 0])
    assert planned((8, 8), (1, 0)) == (8, 8, 8, 8, [1, 1], [0, 0], [0, 0])
    assert planned((16, 96, 56, 56), (1, 0, 2, 3)) is None  # innermost contiguous both sides
    assert planned((2, 3, 4, 5, 6), (4, 3, 2, 1, 0)) is None  # three outer axes
    assert planned((70000, 8, 8), (0, 2, 1)) is None  # 70000 outer: past the grid's z


@needs_vulkan
@pytest.mark.parametrize("first", [True, False], ids=["transposed-first", "transposed-second"])
@pytest.mark.parametrize("shape", [(2, 40, 7, 9), (1, 96, 14, 14)])
def test_transpose_and_add(rng, shape, first):
    """ConvNeXt's block end: the channels-last branch transposed back and added to the residual, one
    copy_tile_add.comp pass (vulkan.TransposedBinary); with the tiles off, binary.comp's strided read."""
    n, c, h, w = shape
    b = mnn.GraphBuilder()
    x = b.input("x", shape)
    branch = b.input("branch", (n, h, w, c))
    t = b.Transpose(branch, perm=[0, 3, 1, 2])
    b.output(b.Add(t, x) if first else b.Add(x, t), "y")
    feeds = {
        "x": rng.standard_normal(shape).astype("float32"),
        "branch": rng.standard_normal((n, h, w, c)).astype("float32"),
    }
    graph = b.build()
    assert check_vulkan(graph, feeds, ON) == ["copy_tile_add"]
    assert "copy_tile_add" not in check_vulkan(graph, feeds, {"vulkan.copy_tiles": "0"})

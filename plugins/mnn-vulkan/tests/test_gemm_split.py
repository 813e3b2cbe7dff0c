"""Split-K GEMMs (kernels/gemm_split.py): K cut into slices summed by splitk_reduce.comp, against the
reference on odd sizes (MatMul, Gemm with a bias row or column, alpha, an activation, the fused
attention-style MatMul with bias and GELU), with forced slice counts and a GPU's own choices; and
the choice itself for a batch-1 transformer's Linears, without a device."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from test_gemv import _segment_shaders
from vulkan_testing import needs_vulkan

import mnn_core as mnn

GPU = SimpleNamespace(type="discrete", name="NVIDIA H100 80GB HBM3", props={})


def _rec(**options):
    return SimpleNamespace(device=GPU, options=options, half=False, native=True)


def test_a_batch_1_transformers_linears_are_split():
    from mnn_vulkan.kernels import gemm_split
    from mnn_vulkan.kernels.matmul import MID, WIDE

    row = (0, 1, 0, 0)  # a Linear's bias row
    # BERT-base, 128 tokens: q/k/v/out 128x768 (K 768) were 16x16 blocks of one output, 192 K steps
    # for the second MLP GEMM (K 3072); now 32x64 blocks in 6 slices of 128, 16 of 192 (the cap)
    assert gemm_split.plan(_rec(), 128, 768, 768, 1, row, 1.0) == (*WIDE, (32, 64), 6)
    assert gemm_split.plan(_rec(), 128, 768, 3072, 1, row, 1.0) == (*WIDE, (32, 64), 16)
    assert gemm_split.plan(_rec(), 128, 3072, 768, 1, row, 1.0) == (*WIDE, (32, 64), 6)
    # slices of at least 256 (the default before): fewer, and 32x32 blocks where 3 slices are too few
    least_256 = _rec(**{"vulkan.splitk_min": 256})
    assert gemm_split.plan(least_256, 128, 768, 768, 1, row, 1.0) == (*MID, (32, 32), 3)
    assert gemm_split.plan(least_256, 128, 768, 3072, 1, row, 1.0) == (*WIDE, (32, 64), 12)
    # with vulkan.splitk_whole_at=132 the one whose 32x64 blocks give 192 groups stays whole, not the others
    whole_at = _rec(**{"vulkan.splitk_whole_at": 132})
    assert gemm_split.plan(whole_at, 128, 3072, 768, 1, row, 1.0) is None
    assert gemm_split.plan(whole_at, 128, 768, 768, 1, row, 1.0) == (*WIDE, (32, 64), 6)
    # batch 16 (2048 rows) fills the GPU whole; batched products, float16 and other bias layouts stay whole
    assert gemm_split.plan(_rec(), 2048, 768, 768, 1, row, 1.0) is None
    assert gemm_split.plan(_rec(), 128, 768, 768, 12, row, 1.0) is None
    assert (
        gemm_split.plan(SimpleNamespace(device=GPU, options={}, half=True, native=True), 128, 768, 768, 1, None, 1.0)
        is None
    )
    assert gemm_split.plan(_rec(), 128, 768, 768, 1, (768, 1, 0, 0), 1.0) is None
    assert gemm_split.plan(_rec(), 128, 768, 768, 1, row, 2.0) is None
    # slices divide K; the option keeps GEMMs whole (sweeps); a CPU device splits only when forced
    assert gemm_split.plan(_rec(), 128, 768, 769, 1, None, 1.0) is None  # 769 is prime
    assert gemm_split.plan(_rec(**{"vulkan.gemm_splitk": False}), 128, 768, 768, 1, row, 1.0) is None
    cpu = SimpleNamespace(device=SimpleNamespace(type="cpu", name="llvmpipe", props={}), options={}, half=False)
    assert gemm_split.plan(cpu, 128, 768, 768, 1, row, 1.0) is None
    cpu.options = {"vulkan.splitk": 4}
    assert gemm_split.plan(cpu, 128, 768, 768, 1, row, 1.0)[-1] == 4


def _const(b, rng, *shape):
    return b.const(rng.standard_normal(shape).astype("float32"))


def _check(graph, feeds, options, split=True):
    want = mnn.Session(graph, backend="reference").run(feeds)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options=options)
    got = sess.run(feeds)
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-4)
    assert ("splitk_reduce" in _segment_shaders(sess)) == split, _segment_shaders(sess)
    return sess


CASES = [  # (m, k, n, forced slice count: None for the GPU's own choice)
    (37, 96, 21, 3),
    (5 * 9, 301, 64, 7),  # 301 = 7 * 43
    (128, 768, 192, None),  # the GPU's choice: 16x16 blocks in 3 slices
    (1, 64, 33, 4),
]


@needs_vulkan
@pytest.mark.parametrize("m,k,n,splits", CASES)
def test_split_matmul_and_gemm_match_the_reference(rng, m, k, n, splits):
    options = {"vulkan.gpu_tiling": True, "vulkan.gemv": False}
    if splits:
        options["vulkan.splitk"] = splits
    x = rng.standard_normal((m, k)).astype("float32")
    w = rng.standard_normal((k, n)).astype("float32")
    b = mnn.GraphBuilder()
    xi = b.input("x", (m, k))
    b.output(b.MatMul(xi, b.const(w)), "plain")
    b.output(
        b.Relu(b.Gemm(xi, b.const(w.T.copy()), b.const(rng.standard_normal(n).astype("float32")), transB=1, alpha=0.5)),
        "row",
    )
    b.output(b.Gemm(xi, b.const(w), b.const(rng.standard_normal((m, 1)).astype("float32"))), "column")
    _check(b.build(), {"x": x}, options)


@needs_vulkan
def test_fused_linear_with_gelu_is_split(rng):
    """A Linear as the fusions see it (MatMul, bias Add, GELU: vulkan.FusedMatMul), batch 1."""
    m, k, n = 24, 160, 48
    b = mnn.GraphBuilder()
    xi = b.input("x", (1, m, k))
    y = b.Add(
        b.MatMul(xi, b.const(rng.standard_normal((k, n)).astype("float32"))),
        b.const(rng.standard_normal(n).astype("float32")),
    )
    b.output(b.Gelu(y), "y")
    x = rng.standard_normal((1, m, k)).astype("float32")
    _check(b.build(), {"x": x}, {"vulkan.gpu_tiling": True, "vulkan.splitk": 5})
    _check(
        b.build(), {"x": x}, {"vulkan.gpu_tiling": True, "vulkan.splitk": 5, "vulkan.gemm_splitk": False}, split=False
    )


@needs_vulkan
def test_what_stays_whole(rng):
    """A bias of a full M x N tensor and a batched MatMul keep one gemm.comp dispatch."""
    m, k, n = 16, 64, 24
    b = mnn.GraphBuilder()
    xi = b.input("x", (m, k))
    b.output(
        b.Gemm(
            xi,
            b.const(rng.standard_normal((k, n)).astype("float32")),
            b.const(rng.standard_normal((m, n)).astype("float32")),
        ),
        "full",
    )
    _check(b.build(), {"x": rng.standard_normal((m, k)).astype("float32")}, {"vulkan.splitk": 4}, split=False)
    b = mnn.GraphBuilder()
    xi = b.input("x", (3, m, k))
    b.output(b.MatMul(xi, _const(b, rng, 3, k, n)), "batched")
    _check(b.build(), {"x": rng.standard_normal((3, m, k)).astype("float32")}, {"vulkan.splitk": 4}, split=False)


@needs_vulkan
def test_independent_split_gemms_need_no_barrier_between_them(rng):
    """q, k and v of one input, each split: their partial sums in different parts of the scratch,
    so a barrier comes only before each sum (3), none for reusing the scratch's bytes (5 then)."""
    import mnn_vulkan

    m, k, n = 16, 96, 32
    b = mnn.GraphBuilder()
    xi = b.input("x", (1, m, k))
    for name in "qkv":
        b.output(b.Add(b.MatMul(xi, _const(b, rng, k, n)), _const(b, rng, n)), name)
    x = rng.standard_normal((1, m, k)).astype("float32")
    sess = _check(b.build(), {"x": x}, {"vulkan.gpu_tiling": True, "vulkan.splitk": 3})
    segment = [s for s in mnn_vulkan.segments().values() if sess.plan.placements[0].node in s.names][-1]
    assert segment.shaders.count("splitk_reduce") == 3 and segment.barriers == 3


def test_a_channels_last_linears_batch_dims_fold_into_rows():
    """ConvNeXt's MLP at batch 1 (1 x 7 x 7 x 3072 @ 3072 x 768) was 7 matrices of 7 rows; folded, one
    GEMM of 49 rows, which split-K then cuts along K. Batched B, rows that do not continue from one
    matrix into the next (A transposed) and a bias that differs per matrix keep the batch."""
    from mnn_vulkan.kernels.matmul import WIDE, fold_batch

    from mnn_core.backend.kit.params import matmul_plan

    m, n, k, dims, sa, sb, sc = matmul_plan((2, 7, 7, 3072), (3072, 768))
    assert (m, dims) == (7, [14])
    a_st, b_st, c_st, row = (k, 1, 0, sa[0]), (n, 1, 0, sb[0]), (0, sc[0]), (0, 1, 0, 0)
    assert fold_batch(GPU, {}, m, n, k, 1, 14, a_st, b_st, c_st, row) == (
        98,
        1,
        1,
        (k, 1, 0, 0),
        (n, 1, 0, 0),
        (0, 0),
        (0, 1, 0, 0),
    )
    # two batch dims (images, rows of an image: strides that do not merge) fold one after the other
    two = fold_batch(GPU, {}, 7, n, k, 2, 7, (k, 1, 49 * k, 7 * k), (n, 1, 0, 0), (49 * n, 7 * n), None)
    assert two[:3] == (98, 1, 1)
    kept = (7, 1, 14)
    assert fold_batch(GPU, {}, 7, n, k, 1, 14, a_st, (n, 1, 0, k * n), c_st, None)[:3] == kept  # batched B
    assert fold_batch(GPU, {}, 7, n, k, 1, 14, (1, 7, 0, 7 * k), b_st, c_st, None)[:3] == kept  # A transposed
    assert fold_batch(GPU, {}, 7, n, k, 1, 14, a_st, b_st, c_st, (0, 1, 0, n))[:3] == kept  # a bias per matrix
    # folded, the batch-1 MLP GEMM is split: 32x64 blocks in 16 slices
    assert gemm_split_plan(49, 768, 3072) == (*WIDE, (32, 64), 16)


def gemm_split_plan(m, n, k):
    from mnn_vulkan.kernels import gemm_split

    return gemm_split.plan(_rec(), m, n, k, 1, (0, 1, 0, 0), 1.0)


@needs_vulkan
@pytest.mark.parametrize("shape", [(1, 7, 5), (2, 3, 5)], ids=["one-image", "two-images"])
def test_channels_last_linear_with_layer_scale_is_split(rng, shape):
    """ConvNeXt's second MLP layer as the fusions see it: MatMul over channels-last rows, bias Add
    and the layer scale's Mul (vulkan.FusedMatMul with the factors folded into the weights), its
    batch dims folded into rows and K split by the GPU's own choice (and forced), against the
    reference; the first layer (with GELU) too."""
    k, n = 1024, 40
    b = mnn.GraphBuilder()
    xi = b.input("x", (*shape, k))
    y = b.Add(b.MatMul(xi, _const(b, rng, k, n)), _const(b, rng, n))
    b.output(b.Mul(y, _const(b, rng, n)), "scaled")
    b.output(b.Gelu(b.Add(b.MatMul(xi, _const(b, rng, k, n)), _const(b, rng, n))), "gelu")
    x = rng.standard_normal((*shape, k)).astype("float32")
    gpu = {"vulkan.gpu_tiling": True, "vulkan.gemv": False}
    sess = _check(b.build(), {"x": x}, gpu)
    assert _segment_shaders(sess).count("splitk_reduce") == 2, _segment_shaders(sess)
    _check(b.build(), {"x": x}, {**gpu, "vulkan.splitk": 3})
    _check(b.build(), {"x": x}, {**gpu, "vulkan.gemm_splitk": False}, split=False)
    _check(b.build(), {"x": x}, {**gpu, "vulkan.fold_batch": 0}, split=False)  # 5 rows a matrix, batched

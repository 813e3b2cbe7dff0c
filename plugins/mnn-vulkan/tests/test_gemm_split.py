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
    # for the second MLP GEMM (K 3072); now 32x32 blocks in 3 slices, 32x64 in 12
    assert gemm_split.plan(_rec(), 128, 768, 768, 1, row, 1.0) == (*MID, (32, 32), 3)
    assert gemm_split.plan(_rec(), 128, 768, 3072, 1, row, 1.0) == (*WIDE, (32, 64), 12)
    assert gemm_split.plan(_rec(), 128, 3072, 768, 1, row, 1.0) == (*WIDE, (32, 64), 3)
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

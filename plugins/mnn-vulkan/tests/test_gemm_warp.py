"""gemm_warp.comp (warp tiles of 32 x 64, 8x8 outputs per invocation, 16-byte loads where aligned;
"vulkan.big_gemm_shader": "warp") against the reference: every block size, with and without its
16-byte loads and stores, on odd sizes (partial blocks, K not a multiple of 4 or of the slice, K
below one slice), A and B contiguous along either axis (Gemm's transposes), bias along either
axis with alpha/beta and activations, batched, broadcast and folded MatMuls, fused epilogues
(GELU, layer scale, residual), 1x1 convolutions; and the block it picks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan

BLOCKS = ["128x128", "128x64", "64x128"]


def _options(block: str, vec: bool = True) -> dict:
    return {"vulkan.big_gemm": block, "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_vec": vec}


def _shaders(sess):
    import mnn_vulkan

    names = {p.node for p in sess.plan.placements}
    return [s for s in mnn_vulkan.segments().values() if s.names and set(s.names) <= names][-1].shaders


def _check(graph, feeds, options, rtol=1e-4):
    want = mnn.Session(graph, backend="reference").run(feeds)
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options=options)
    got = sess.run(feeds)
    for name, ref in want.items():
        np.testing.assert_allclose(got[name], ref, rtol=rtol, atol=rtol * max(1.0, float(np.abs(ref).max())))
    return _shaders(sess)


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((130, 68), (68, 132)),  # partial blocks both ways; K and N multiples of 4 (16-byte loads)
        ((130, 67), (67, 129)),  # K and N not multiples of 4: scalar loads at the edges
        ((1, 200, 40), (40, 300)),  # K = 40: two and a half slices of 16
        ((70, 3), (3, 66)),  # K below one slice and below 4
        ((2, 3, 65, 17), (2, 3, 17, 70)),  # batched alike
        ((4, 197, 64), (64, 196)),  # B shared by every batch: folded into 788 rows
        ((3, 1, 50, 36), (1, 2, 36, 44)),  # broadcast batch dims
    ],
)
def test_matmul(rng, block, vec, a_shape, b_shape):
    b = mnn.GraphBuilder()
    x = b.input("x", a_shape)
    w = b.const(rng.standard_normal(b_shape).astype("float32"))
    b.output(b.MatMul(x, w), "y")
    shaders = _check(b.build(), {"x": rng.standard_normal(a_shape).astype("float32")}, _options(block, vec))
    assert "gemm_warp" in shaders, shaders


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias_shape", [(76,), (44, 1), None])
def test_gemm_transposes_bias_activation(rng, trans_a, trans_b, bias_shape, vec):
    m, k, n = 44, 132, 76
    b = mnn.GraphBuilder()
    x = b.input("x", (k, m) if trans_a else (m, k))
    w = b.const(rng.standard_normal((n, k) if trans_b else (k, n)).astype("float32"))
    c = None if bias_shape is None else b.const(rng.standard_normal(bias_shape).astype("float32"))
    b.output(b.Relu(b.Gemm(x, w, c, transA=trans_a, transB=trans_b, alpha=0.5, beta=2.0)), "y")
    x = rng.standard_normal((k, m) if trans_a else (m, k)).astype("float32")
    assert "gemm_warp" in _check(b.build(), {"x": x}, _options("64x128", vec))


@pytest.mark.parametrize("block", BLOCKS)
def test_linear_gelu_layer_scale_and_residual(rng, block):
    """The transformer epilogues a fused MatMul carries: bias + GELU, then a layer-scale Mul and a
    residual Add (ConvNeXt), on 197 tokens (a partial block)."""
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 197, 64))
    w1 = b.const((rng.standard_normal((64, 132)) * 0.2).astype("float32"))
    b1 = b.const(rng.standard_normal(132).astype("float32"))
    w2 = b.const((rng.standard_normal((132, 64)) * 0.2).astype("float32"))
    b2 = b.const(rng.standard_normal(64).astype("float32"))
    scale = b.const(rng.standard_normal(64).astype("float32"))
    h = b.Gelu(b.Add(b.MatMul(x, w1), b1))
    b.output(b.Add(x, b.Mul(b.Add(b.MatMul(h, w2), b2), scale)), "y")
    feeds = {"x": rng.standard_normal((1, 197, 64)).astype("float32")}
    shaders = _check(b.build(), feeds, _options(block))
    assert shaders.count("gemm_warp") == 2, shaders


@pytest.mark.parametrize("block", BLOCKS)
def test_slices_of_8(rng, block):
    """ "vulkan.big_gemm_bk": 8 (a GPU's sweep; lavapipe's 128x128 blocks take 8 anyway): K = 40."""
    b = mnn.GraphBuilder()
    x = b.input("x", (131, 40))
    b.output(b.MatMul(x, b.const(rng.standard_normal((40, 140)).astype("float32"))), "y")
    options = _options(block) | {"vulkan.big_gemm_bk": 8}
    assert "gemm_warp" in _check(b.build(), {"x": rng.standard_normal((131, 40)).astype("float32")}, options)


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
def test_pointwise_convolution(rng, vec):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 37, 11, 13))
    w = b.const(rng.standard_normal((70, 37, 1, 1)).astype("float32"))
    bias = b.const(rng.standard_normal(70).astype("float32"))
    b.output(b.Relu(b.Conv(x, w, bias)), "y")
    feeds = {"x": rng.standard_normal((2, 37, 11, 13)).astype("float32")}
    assert "gemm_warp" in _check(b.build(), feeds, _options("128x64", vec))


def test_a_bad_shader_name_is_named(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (300, 64))
    b.output(b.MatMul(x, b.const(rng.standard_normal((64, 300)).astype("float32"))), "y")
    with pytest.raises(Exception, match="vulkan.big_gemm_shader must be"):
        options = _options("128x128") | {"vulkan.big_gemm_shader": "fast"}
        s = mnn.Session(b.build(), backend="vulkan", fallback=False, options=options)
        s.run({"x": np.zeros((300, 64), "float32")})


def test_the_block_follows_the_sms():
    """128x128 blocks where they give 1.5 waves of work groups, else the half-size block with more
    of them: the four GEMMs of BERT-base and ViT-S/16 at batch 16 on an H100 (132 SMs)."""
    from mnn_vulkan.kernels.matmul import WARP_GEMM, big_gemm_local

    h100 = SimpleNamespace(type="discrete", name="NVIDIA H100", props={"sm_count": 132})

    def block(m, n, sms=132):
        h100.props["sm_count"] = sms
        rec = SimpleNamespace(device=h100, options={"vulkan.big_gemm_shader": "warp"}, half=False)
        local = big_gemm_local(rec, m, n, 768, 1)
        return next((name for name, v in WARP_GEMM.items() if v == local), None)

    assert block(2048, 768) == "128x64"  # 96 blocks of 128x128: 192 of 128x64
    assert block(2048, 3072) == "128x128"  # 384
    assert block(3152, 384) == "128x64"  # 75: 150
    assert block(3152, 1536) == "128x128"  # 300
    assert block(384, 3152) == "64x128"
    assert block(2048, 768, sms=40) == "128x128"  # a smaller GPU: 96 blocks fill it
    assert block(128, 128) is None  # too few blocks for any: gemm.comp
    assert block(50176, 96) == "128x128"  # ConvNeXt-T's stage-1 MLP (gemm_big.comp wants 128 columns)
    assert block(64, 50176) == "64x128"
    assert block(60, 50176) is None


def test_registers_stay_registers():
    """The accumulators and the prefetched next slice of gemm_warp and conv_warp must reach the driver
    as SSA values, not Function arrays (see test_gemm_big.py: NVIDIA kept those in local memory)."""
    from test_gemm_big import _function_variables

    from mnn_core.backend.kit import spirv

    assert _function_variables(spirv.spirv("gemm_warp")) == 0
    assert _function_variables(spirv.spirv("conv_warp")) == 0


@pytest.mark.parametrize("bk", [8, 16])
def test_every_block_fits_the_staging_registers(bk):
    """An invocation stages at most 4 groups of 4 elements of A and of B a slice (named registers
    ra0..ra3, rb0..rb3), whole groups, and conv_warp.comp's gathered columns need NT a multiple of BN:
    a block added to WARP_GEMM must keep to that."""
    from mnn_vulkan.kernels.matmul import WARP_GEMM, warp_blocks

    for local, warps_n in WARP_GEMM.values():
        nt = local[0]
        bm, bn = warp_blocks(local, warps_n)
        assert nt % 32 == 0 and bm * bn == 64 * nt
        for side in (bm, bn):
            assert bk * side % (4 * nt) == 0 and bk * side // (4 * nt) <= 4
        assert nt % bn == 0 and bk % (nt // bn) == 0


@pytest.mark.parametrize("splits", [2, 3])
@pytest.mark.parametrize("bias_shape", [(1, 132), (70, 1), None])
def test_split_k(rng, splits, bias_shape):
    """ "vulkan.big_gemm_splitk": the slices' products on gemm_warp.comp, then splitk_reduce.comp adds
    them, the bias row or column and GELU; K = 96 divides into 2 and 3 slices (48 and 32 deep)."""
    b = mnn.GraphBuilder()
    x = b.input("x", (70, 96))
    y = b.MatMul(x, b.const(rng.standard_normal((96, 132)).astype("float32")))
    if bias_shape is not None:
        y = b.Add(y, b.const(rng.standard_normal(bias_shape).astype("float32")))
    b.output(b.Gelu(y), "y")
    options = _options("128x128") | {"vulkan.big_gemm_splitk": splits}
    shaders = _check(b.build(), {"x": rng.standard_normal((70, 96)).astype("float32")}, options)
    assert "gemm_warp" in shaders and "splitk_reduce" in shaders, shaders

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
from vulkan_testing import check_vulkan, gemm_case, matmul_case, needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan

BLOCKS = ["128x128", "128x64", "64x128"]


def _options(block: str, vec: bool = True, bk: int = 16) -> dict:
    """A block forced, with 16-byte accesses or not, and K slices of 16 (by default small K, as most
    cases here, takes slices of 8: WARP_BK8_MAX_K) or 8; lavapipe's 128x128 blocks take 8 either way."""
    options = {"vulkan.big_gemm": block, "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_vec": vec}
    return options | {"vulkan.big_gemm_bk": bk}


@pytest.mark.parametrize("vec,bk", [(True, 16), (False, 16), (True, 8)], ids=["vec4", "scalar", "vec4-bk8"])
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
def test_matmul(rng, block, vec, bk, a_shape, b_shape):
    graph, feeds = matmul_case(rng, a_shape, b_shape)
    shaders = check_vulkan(graph, feeds, _options(block, vec, bk))
    assert "gemm_warp" in shaders, shaders


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias_shape", [(76,), (44, 1), None])
def test_gemm_transposes_bias_activation(rng, trans_a, trans_b, bias_shape, vec):
    m, k, n = 44, 132, 76
    graph, feeds = gemm_case(rng, m, k, n, trans_a, trans_b, bias_shape)
    assert "gemm_warp" in check_vulkan(graph, feeds, _options("64x128", vec))


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
    shaders = check_vulkan(b.build(), feeds, _options(block))
    assert shaders.count("gemm_warp") == 2, shaders


@pytest.mark.parametrize("block", BLOCKS)
def test_slices_of_8(rng, block):
    """ "vulkan.big_gemm_bk": 8 (a GPU's sweep; lavapipe's 128x128 blocks take 8 anyway): K = 40."""
    b = mnn.GraphBuilder()
    x = b.input("x", (131, 40))
    b.output(b.MatMul(x, b.const(rng.standard_normal((40, 140)).astype("float32"))), "y")
    options = _options(block) | {"vulkan.big_gemm_bk": 8}
    assert "gemm_warp" in check_vulkan(b.build(), {"x": rng.standard_normal((131, 40)).astype("float32")}, options)


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
def test_pointwise_convolution(rng, vec):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 37, 11, 13))
    w = b.const(rng.standard_normal((70, 37, 1, 1)).astype("float32"))
    bias = b.const(rng.standard_normal(70).astype("float32"))
    b.output(b.Relu(b.Conv(x, w, bias)), "y")
    feeds = {"x": rng.standard_normal((2, 37, 11, 13)).astype("float32")}
    assert "gemm_warp" in check_vulkan(b.build(), feeds, _options("128x64", vec))


def test_a_bad_shader_name_is_named(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (300, 64))
    b.output(b.MatMul(x, b.const(rng.standard_normal((64, 300)).astype("float32"))), "y")
    with pytest.raises(Exception, match="vulkan.big_gemm_shader must be"):
        options = _options("128x128") | {"vulkan.big_gemm_shader": "fast"}
        s = mnn.Session(b.build(), backend="vulkan", fallback=False, options=options)
        s.run({"x": np.zeros((300, 64), "float32")})


def test_the_default_is_128x128_where_gemm_big_took_them():
    """By default on a discrete GPU, gemm_warp.comp's 128x128 blocks wherever gemm_big.comp's default
    took its own (they won on every GEMM the H100 timed), never a half-size block; "auto" follows the
    SMs (128x128 at 1.5 waves, else the half-size block with more groups); "big" goes back."""
    from mnn_vulkan.kernels.matmul import BIG_GEMM, WARP_GEMM, big_gemm_local

    h100 = SimpleNamespace(type="discrete", name="NVIDIA H100", props={"sm_count": 132})

    def block(m, n, sms=132, kind="discrete", **options):
        h100.props["sm_count"], h100.type = sms, kind
        rec = SimpleNamespace(device=h100, options=options, half=False)
        local = big_gemm_local(rec, m, n, 768, 1)
        return next((name for name, v in WARP_GEMM.items() if v == local), local)

    assert block(2048, 768) == "128x128"  # BERT-base b16: 96 groups, not 192 of 128x64
    assert block(3152, 384) == "128x128"  # ViT-S/16 b16: 75
    assert block(2048, 3072) == "128x128" and block(3152, 1536) == "128x128"
    assert block(128, 768) is None and block(50176, 96) is None  # 6 groups; 96 columns: as gemm_big
    assert block(1024, 512, sms=32) == "128x128" and block(1024, 512) is None
    assert block(2048, 768, kind="integrated") is None and block(2048, 768, kind="cpu") is None
    assert block(2048, 768, **{"vulkan.big_gemm_shader": "big"}) == BIG_GEMM["128x128"]
    auto = {"vulkan.big_gemm": "auto"}
    assert block(2048, 768, **auto) == "128x64" and block(3152, 384, **auto) == "128x64"
    assert block(2048, 3072, **auto) == "128x128" and block(384, 3152, **auto) == "64x128"
    assert block(2048, 768, sms=40, **auto) == "128x128"  # a smaller GPU: 96 blocks fill it
    assert block(64, 50176, **auto) == "64x128" and block(60, 50176, **auto) is None


def test_slice_depth_follows_k():
    """K slices of 8 up to WARP_BK8_MAX_K (ViT-S/16's K = 384, ResNet-50's 64-channel 3x3s), 16 deeper
    where they fit (8 on lavapipe's 32 KiB at 128x128); "vulkan.big_gemm_bk" forces either."""
    from mnn_vulkan.kernels.matmul import WARP_GEMM, warp_spec

    gpu = SimpleNamespace(props={"max_shared_bytes": 49152, "min_storage_align": 16})
    cpu = SimpleNamespace(props={"max_shared_bytes": 32768, "min_storage_align": 16})

    def bk(device, k, block="128x128", **options):
        return warp_spec(device, options, *WARP_GEMM[block], k)[2]

    assert [bk(gpu, k) for k in (96, 384, 576, 577, 768, 3072)] == [8, 8, 8, 16, 16, 16]
    assert bk(gpu, 0) == 16  # K not known: 16
    assert bk(cpu, 3072) == 8 and bk(cpu, 3072, "64x128") == 16
    assert bk(gpu, 384, **{"vulkan.big_gemm_bk": 16}) == 16 and bk(gpu, 3072, **{"vulkan.big_gemm_bk": "8"}) == 8
    assert bk(cpu, 3072, **{"vulkan.big_gemm_bk": 16}) == 8  # does not fit
    with pytest.raises(ValueError, match="vulkan.big_gemm_bk must be"):
        bk(gpu, 384, **{"vulkan.big_gemm_bk": 32})


def test_the_default_runs_where_the_device_is_discrete(rng, monkeypatch):
    """lavapipe taken for a discrete GPU: a BERT-base b16-like Linear + GELU (2048 rows, 6 x 16 blocks)
    runs on gemm_warp.comp by default (K = 384: slices of 8), and on gemm_big.comp under "big"."""
    from mnn_vulkan import device

    monkeypatch.setattr(device.choose(None), "type", "discrete")
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 2048, 384))
    y = b.MatMul(x, b.const((rng.standard_normal((384, 768)) * 0.1).astype("float32")))
    b.output(b.Gelu(b.Add(y, b.const(rng.standard_normal(768).astype("float32")))), "y")
    graph, feeds = b.build(), {"x": rng.standard_normal((1, 2048, 384)).astype("float32")}
    assert "gemm_warp" in check_vulkan(graph, feeds, {})
    assert "gemm_big" in check_vulkan(graph, feeds, {"vulkan.big_gemm_shader": "big"})


def test_registers_stay_registers():
    """The accumulators and the prefetched next slice of gemm_warp and conv_warp must reach the driver
    as SSA values, not Function arrays (see test_gemm_big.py: NVIDIA kept those in local memory)."""
    from test_gemm_big import _function_variables

    from mnn_core.backend.kit import spirv

    assert _function_variables(spirv.spirv("gemm_warp")) == 0
    assert _function_variables(spirv.spirv("gemm_warp_wide")) == 0
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
    shaders = check_vulkan(b.build(), {"x": rng.standard_normal((70, 96)).astype("float32")}, options)
    assert "gemm_warp" in shaders and "splitk_reduce" in shaders, shaders


WIDE_BLOCKS = ["128x128", "256x128", "128x256"]


def _wide(block: str, vec: bool = True) -> dict:
    return {"vulkan.big_gemm": block, "vulkan.big_gemm_shader": "warp-wide", "vulkan.big_gemm_vec": vec}


@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
@pytest.mark.parametrize("block", WIDE_BLOCKS)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((130, 68), (68, 260)),  # partial blocks both ways, a second block of 128 columns
        ((259, 67), (67, 129)),  # K and N not multiples of 4; M past 256
        ((1, 200, 40), (40, 300)),  # K = 40: slices of 8 and a half
        ((70, 3), (3, 66)),  # K below one slice and below 4
        ((2, 3, 65, 17), (2, 3, 17, 70)),  # batched
    ],
)
def test_wide_matmul(rng, block, vec, a_shape, b_shape):
    """gemm_warp_wide.comp (each invocation 8x16 outputs, 32 x 128 per warp) on every block."""
    b = mnn.GraphBuilder()
    x = b.input("x", a_shape)
    b.output(b.MatMul(x, b.const(rng.standard_normal(b_shape).astype("float32"))), "y")
    feeds = {"x": rng.standard_normal(a_shape).astype("float32")}
    assert "gemm_warp_wide" in check_vulkan(b.build(), feeds, _wide(block, vec))


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias_shape", [(140,), (44, 1)])
def test_wide_gemm_transposes_bias_gelu(rng, trans_a, trans_b, bias_shape):
    m, k, n = 44, 132, 140
    b = mnn.GraphBuilder()
    x = b.input("x", (k, m) if trans_a else (m, k))
    w = b.const(rng.standard_normal((n, k) if trans_b else (k, n)).astype("float32"))
    c = b.const(rng.standard_normal(bias_shape).astype("float32"))
    b.output(b.Gelu(b.Gemm(x, w, c, transA=trans_a, transB=trans_b, alpha=0.5, beta=2.0)), "y")
    x = rng.standard_normal((k, m) if trans_a else (m, k)).astype("float32")
    assert "gemm_warp_wide" in check_vulkan(b.build(), {"x": x}, _wide("128x128"))


def test_wide_blocks_fit_the_staging_registers():
    """As test_every_block_fits_the_staging_registers, for WARP_WIDE_GEMM's blocks at either depth."""
    from mnn_vulkan.kernels.matmul import WARP_WIDE_GEMM, warp_blocks

    for local, warps_n in WARP_WIDE_GEMM.values():
        nt = local[0]
        bm, bn = warp_blocks(local, warps_n, wide=True)
        assert nt % 32 == 0 and bm * bn == 128 * nt
        for bk in (8, 16):
            for side in (bm, bn):
                assert bk * side % (4 * nt) == 0 and bk * side // (4 * nt) <= 4


def test_wide_takes_the_default_rule():
    from mnn_vulkan.kernels.matmul import WARP_WIDE_GEMM, big_gemm_local

    h100 = SimpleNamespace(type="discrete", name="NVIDIA H100", props={"sm_count": 132})
    rec = SimpleNamespace(device=h100, options={"vulkan.big_gemm_shader": "warp-wide"}, half=False)
    assert big_gemm_local(rec, 2048, 768, 3072, 1) == WARP_WIDE_GEMM["128x128"]
    assert big_gemm_local(rec, 128, 768, 3072, 1) is None

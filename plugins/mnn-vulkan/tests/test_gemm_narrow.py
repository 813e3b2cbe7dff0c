"""gemm_warp_n96.comp (warp tiles of 32 x 96, 8x12 outputs per invocation: 128x96 and 128x192 blocks)
and the rule of kernels/gemm_narrow.py ("vulkan.warp_narrow") against the reference: odd sizes
(M, N and K not multiples of the block, of 4 or of the slice), both load paths, slices of 8 (whose
B groups do not divide among the invocations) and 16, transposes, bias with alpha/beta, fused GELU,
layer scale and residual, batched MatMuls and 1x1 convolutions; the block the rule picks per shape."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from vulkan_testing import check_vulkan, gemm_case, matmul_case, needs_vulkan

import mnn_core as mnn

N96_BLOCKS = ["128x96", "128x192"]


def _options(block: str, vec: bool = True, bk: int = 16) -> dict:
    return {"vulkan.warp_narrow": block, "vulkan.big_gemm_vec": vec, "vulkan.big_gemm_bk": bk}


@needs_vulkan
@pytest.mark.parametrize("vec,bk", [(True, 16), (False, 16), (True, 8)], ids=["vec4", "scalar", "vec4-bk8"])
@pytest.mark.parametrize("block", N96_BLOCKS)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((130, 68), (68, 96)),  # one block's width exactly (ConvNeXt's 96 channels), two partial rows
        ((259, 67), (67, 197)),  # K and N not multiples of 4; N past 192; M past 256
        ((1, 200, 40), (40, 100)),  # K = 40: slices of 16 and a half
        ((70, 3), (3, 66)),  # K below one slice and below 4
        ((2, 3, 65, 17), (2, 3, 17, 190)),  # batched alike
        ((4, 49, 72), (72, 192)),  # B shared by every batch: folded into 196 rows
    ],
)
def test_matmul(rng, block, vec, bk, a_shape, b_shape):
    graph, feeds = matmul_case(rng, a_shape, b_shape)
    shaders = check_vulkan(graph, feeds, _options(block, vec, bk))
    assert "gemm_warp_n96" in shaders, shaders


@needs_vulkan
@pytest.mark.parametrize("vec", [True, False], ids=["vec4", "scalar"])
@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias_shape", [(100,), (44, 1), None])
def test_gemm_transposes_bias_activation(rng, trans_a, trans_b, bias_shape, vec):
    m, k, n = 44, 132, 100
    graph, feeds = gemm_case(rng, m, k, n, trans_a, trans_b, bias_shape)
    assert "gemm_warp_n96" in check_vulkan(graph, feeds, _options("128x96", vec))


@needs_vulkan
@pytest.mark.parametrize("block", N96_BLOCKS)
def test_convnext_mlp_epilogues(rng, block):
    """ConvNeXt's channels-last MLP at 96 channels: Linear + GELU up to 384, then down to 96 (the
    block's width) with bias, layer scale and the residual, over 7x7 pixels of 2 images."""
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 7, 7, 96))
    w1 = b.const((rng.standard_normal((96, 384)) * 0.1).astype("float32"))
    b1 = b.const(rng.standard_normal(384).astype("float32"))
    w2 = b.const((rng.standard_normal((384, 96)) * 0.1).astype("float32"))
    b2 = b.const(rng.standard_normal(96).astype("float32"))
    scale = b.const(rng.standard_normal(96).astype("float32"))
    h = b.Gelu(b.Add(b.MatMul(x, w1), b1))
    b.output(b.Add(x, b.Mul(b.Add(b.MatMul(h, w2), b2), scale)), "y")
    feeds = {"x": rng.standard_normal((2, 7, 7, 96)).astype("float32")}
    shaders = check_vulkan(b.build(), feeds, _options(block))
    assert shaders.count("gemm_warp_n96") == 2, shaders


@needs_vulkan
@pytest.mark.parametrize("block", ["128x96", "64x128", "128x64"])
def test_pointwise_convolution(rng, block):
    """A 1x1 convolution to 70 channels of 11x13 pixels: one GEMM per image on the forced block."""
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 37, 11, 13))
    w = b.const(rng.standard_normal((70, 37, 1, 1)).astype("float32"))
    bias = b.const(rng.standard_normal(70).astype("float32"))
    b.output(b.Relu(b.Conv(x, w, bias)), "y")
    feeds = {"x": rng.standard_normal((2, 37, 11, 13)).astype("float32")}
    shaders = check_vulkan(b.build(), feeds, _options(block))
    assert ("gemm_warp_n96" if block == "128x96" else "gemm_warp") in shaders, shaders


@needs_vulkan
def test_the_rule_runs_where_the_device_is_discrete(rng, monkeypatch):
    """lavapipe taken for a discrete GPU of 4 SMs: a 1000 x 192 output takes 128x192 blocks by default,
    gemm_warp.comp's 128x128 with the option off, and gemm_big.comp where it is forced."""
    from mnn_vulkan import device

    dev = device.choose(None)
    monkeypatch.setattr(dev, "type", "discrete")
    monkeypatch.setitem(dev.props, "sm_count", 4)
    b = mnn.GraphBuilder()
    x = b.input("x", (1000, 120))
    b.output(b.MatMul(x, b.const((rng.standard_normal((120, 192)) * 0.1).astype("float32"))), "y")
    graph, feeds = b.build(), {"x": rng.standard_normal((1000, 120)).astype("float32")}
    assert "gemm_warp_n96" in check_vulkan(graph, feeds, {})
    assert check_vulkan(graph, feeds, {"vulkan.warp_narrow": "0"}) == ["gemm_warp"]
    assert "gemm_big" in check_vulkan(graph, feeds, {"vulkan.big_gemm_shader": "big", "vulkan.big_gemm": "64x128"})


def _pick(m, n, batch=1, sms=132, mode="default", kind="discrete", **options):
    from mnn_vulkan.kernels.gemm_narrow import NARROW, choose

    device = SimpleNamespace(type=kind, name="NVIDIA H100", props={"sm_count": sms})
    rec = SimpleNamespace(device=device, options={"vulkan.warp_narrow": mode} | options, half=False)
    found = choose(rec, m, n, 384, batch)
    return next((name for name, v in NARROW.items() if v == found), found)


def test_the_rule_on_the_zoo_at_batch_16():
    # ConvNeXt-T's MLP down projections: 96 channels on 128x128 (the H100: 0.192 ms against 128x96's
    # 0.214), 192 on 128x192 (0.182 against 128x128's 0.239)
    assert _pick(16 * 56 * 56, 96) == "128x128"
    assert _pick(16 * 28 * 28, 192) == "128x192"
    # BERT-base's and ViT-S/16's GEMMs keep 128x128 (the measured default)
    for m, n in [(2048, 768), (2048, 3072), (3152, 384), (3152, 1536), (16 * 56 * 56, 384)]:
        assert _pick(m, n) == "128x128", (m, n)
    # ResNet-50's 1x1 convolutions to 64 channels (one GEMM per image): 64-row blocks
    assert _pick(64, 56 * 56, 16) == "64x128"
    # attention's probabilities @ V, 64 wide, one per head: 128x64
    assert _pick(128, 64, 16 * 12) == "128x64" and _pick(197, 64, 16 * 6) == "128x64"
    # too few warps for any block (ResNet-50's 14x14x256 1x1s), fewer than 64 columns: gemm.comp
    assert _pick(256, 196, 16) is None and _pick(512, 49, 16) is None and _pick(128, 768) is None


def test_the_options():
    assert _pick(16 * 28 * 28, 192, mode="0") is None
    assert _pick(16 * 28 * 28, 192, mode="n96") == "128x192" and _pick(16 * 56 * 56, 96, mode="n96") is None
    assert _pick(64, 56 * 56, 16, mode="n96") is None  # only the 96-wide blocks
    assert _pick(2048, 768, mode="n96") is None  # 128x128: big_gemm_local's own
    assert _pick(16 * 56 * 56, 96, kind="cpu") is None and _pick(16 * 56 * 56, 96, kind="cpu", mode="any") == "128x128"
    assert _pick(10, 10, mode="128x192", kind="cpu") == "128x192"  # forced: any device, any shape
    assert _pick(16 * 28 * 28, 192, **{"vulkan.big_gemm": "auto"}) is None
    assert _pick(16 * 28 * 28, 192, **{"vulkan.big_gemm_shader": "big"}) is None
    assert _pick(16 * 28 * 28, 192, **{"vulkan.tiles": "big"}) is None
    assert _pick(16 * 28 * 28, 192, sms=16) == "128x192"  # a smaller GPU, the same fit
    assert _pick(16 * 28 * 28, 192, sms=300) == "128x128"  # 98 groups of 8 warps are too few for 300 SMs
    with pytest.raises(ValueError, match="vulkan.warp_narrow must be"):
        _pick(64, 64, mode="96x96")


@pytest.mark.parametrize("bk", [8, 16])
def test_n96_blocks_fit_the_staging_registers(bk):
    """At most 4 groups of 4 elements of A and of B per invocation a slice (ra0..ra3, rb0..rb3);
    A's groups whole, B's rounded up (the shader skips the groups past the slice)."""
    from mnn_vulkan.kernels.gemm_narrow import NARROW

    for shader, local, warps_n, (bm, bn) in NARROW.values():
        nt = local[0]
        assert nt % 32 == 0 and bn == (96 if shader == "gemm_warp_n96" else 64) * warps_n
        assert bm == 32 * (nt // 32 // warps_n)
        assert bk * bm % (4 * nt) == 0 and bk * bm // (4 * nt) <= 4
        assert -(-bk * bn // (4 * nt)) <= 4


def test_registers_stay_registers():
    """As test_gemm_warp's: the 24 accumulators reach the driver as SSA values, not a Function array."""
    from test_gemm_big import _function_variables

    from mnn_core.backend.kit import spirv

    assert _function_variables(spirv.spirv("gemm_warp_n96")) == 0


def test_warp_fill_slices():
    """ "vulkan.warp_splitk": "auto": a GEMM of one batch whose 128x128 blocks are too few whole, in the fewest
    slices of K (2-4, each >= 256 deep) that reach 0.9 of a wave; not asked, enough whole or too few: None."""
    from mnn_vulkan.kernels.gemm_split import warp_fill_plan

    def splits(m, n, k, sms=132, kind="discrete", **options):
        device = SimpleNamespace(type=kind, name="NVIDIA H100", props={"sm_count": sms, "max_shared_bytes": 49152})
        rec = SimpleNamespace(device=device, options={"vulkan.warp_splitk": "auto"} | options, half=False)
        found = warp_fill_plan(rec, m, n, k, 1, (0, 1), 1.0)
        return None if found is None else found[3]

    assert splits(784, 768, 3072) == 3  # ConvNeXt-T b16's stage-4 down projection: 42 blocks, 126 groups
    assert splits(784, 768, 3072, **{"vulkan.warp_splitk": "0"}) is None and splits(784, 768, 3072, kind="cpu") is None
    assert splits(2048, 768, 3072) is None  # 96 blocks: whole
    assert splits(784, 768, 500) is None  # slices below 256 deep
    assert splits(256, 256, 3072) is None  # 4 blocks: too few even in 4 slices
    assert splits(784, 768, 3072, **{"vulkan.big_gemm": "0"}) is None


@needs_vulkan
def test_warp_fill_runs(rng):
    """The slices' products on gemm_warp.comp and their sum, against the reference (lavapipe taken for a GPU of
    8 SMs: 3 blocks of a 300 x 128 output, too few whole, in 3 slices of K = 768)."""
    from mnn_vulkan import device

    dev = device.choose(None)
    b = mnn.GraphBuilder()
    x = b.input("x", (300, 768))
    y = b.MatMul(x, b.const((rng.standard_normal((768, 128)) * 0.05).astype("float32")))
    b.output(b.Gelu(b.Add(y, b.const(rng.standard_normal(128).astype("float32")))), "y")
    options = {"vulkan.warp_splitk": "auto", "vulkan.gpu_tiling": True}
    old = dev.props.get("sm_count")
    dev.props["sm_count"] = 8
    try:
        shaders = check_vulkan(b.build(), {"x": rng.standard_normal((300, 768)).astype("float32")}, options)
    finally:
        if old is None:
            dev.props.pop("sm_count")
        else:
            dev.props["sm_count"] = old
    assert shaders == ["gemm_warp", "splitk_reduce"], shaders

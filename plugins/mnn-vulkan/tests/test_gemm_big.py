"""gemm_big.comp (8x8 outputs per invocation, 128x128 or 64x128 blocks, double-buffered
slices; opt-in "vulkan.big_gemm") against the reference: odd sizes that leave partial blocks
and partial K slices, A and B contiguous along either axis (Gemm's transposes), bias along
either axis with alpha/beta and an activation, batched and broadcast MatMuls, 1x1 convolutions."""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_testing import check_vulkan, gemm_case, last_segment_shaders, needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan


def _check(graph, feeds, block, rtol=1e-4):
    options = {"vulkan.big_gemm": block, "vulkan.big_gemm_shader": "big"}
    return check_vulkan(graph, feeds, options, rtol)


def test_both_slice_depths_are_covered():
    """On lavapipe (32 KiB of shared memory) 128x128 blocks take 8-deep K slices and 64x128 blocks
    16-deep ones, a GPU's depth: the cases below run both."""
    from mnn_vulkan.device import choose
    from mnn_vulkan.kernels.matmul import BIG_GEMM, big_gemm_bk

    dev = choose(None)
    if dev.props["max_shared_bytes"] == 32768:
        assert [big_gemm_bk(dev, BIG_GEMM[b]) for b in ("128x128", "64x128")] == [8, 16]


@pytest.mark.parametrize("block", ["128x128", "64x128"])
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((130, 67), (67, 129)),  # partial blocks both ways, K not a multiple of 8 or 16
        ((1, 200, 40), (40, 300)),
        ((2, 3, 65, 17), (2, 3, 17, 70)),  # batched alike
        ((4, 197, 64), (64, 197)),  # B shared by every batch
        ((3, 1, 50, 33), (1, 2, 33, 41)),  # broadcast batch dims
        ((5, 260), (260, 9)),
    ],
)
def test_matmul(rng, block, a_shape, b_shape):
    b = mnn.GraphBuilder()
    x = b.input("x", a_shape)
    w = b.const(rng.standard_normal(b_shape).astype("float32"))
    b.output(b.MatMul(x, w), "y")
    graph = b.build()
    shaders = _check(graph, {"x": rng.standard_normal(a_shape).astype("float32")}, block)
    assert "gemm_big" in shaders, shaders


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("bias_shape", [(77,), (45, 1), None])
def test_gemm_transposes_bias_activation(rng, trans_a, trans_b, bias_shape):
    m, k, n = 45, 131, 77
    graph, feeds = gemm_case(rng, m, k, n, trans_a, trans_b, bias_shape)
    assert "gemm_big" in _check(graph, feeds, "128x128")


def test_pointwise_convolution(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 37, 11, 13))
    w = b.const(rng.standard_normal((70, 37, 1, 1)).astype("float32"))
    bias = b.const(rng.standard_normal(70).astype("float32"))
    b.output(b.Relu(b.Conv(x, w, bias)), "y")
    shaders = _check(b.build(), {"x": rng.standard_normal((2, 37, 11, 13)).astype("float32")}, "64x128")
    assert "gemm_big" in shaders, shaders


def test_auto_takes_blocks_only_where_they_fill_a_gpu(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (40, 64))
    b.output(b.MatMul(x, b.const(rng.standard_normal((64, 50)).astype("float32"))), "y")
    graph = b.build()
    x = rng.standard_normal((40, 64)).astype("float32")
    assert "gemm_big" not in _check(graph, {"x": x}, "auto")  # one block: gemm.comp
    big = mnn.GraphBuilder()
    x = big.input("x", (16 * 128, 1200))
    big.output(big.MatMul(x, big.const(rng.standard_normal((1200, 8 * 128)).astype("float32"))), "y")
    sess = mnn.Session(
        big.build(),
        backend="vulkan",
        fallback=False,
        options={"vulkan.big_gemm": "auto", "vulkan.big_gemm_shader": "big"},
    )
    sess.run({"x": np.zeros((16 * 128, 1200), "float32")})
    assert "gemm_big" in last_segment_shaders(sess)  # 16 x 8 = 128 blocks of 128x128 are too few; 64x128 gives 256


def test_off_by_default_on_lavapipe_and_a_bad_value_is_named(rng):
    b = mnn.GraphBuilder()
    x = b.input("x", (300, 64))
    b.output(b.MatMul(x, b.const(rng.standard_normal((64, 300)).astype("float32"))), "y")
    graph = b.build()
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    sess.run({"x": np.zeros((300, 64), "float32")})
    assert "gemm_big" not in last_segment_shaders(sess)
    with pytest.raises(Exception, match="vulkan.big_gemm must be"):
        s = mnn.Session(
            graph,
            backend="vulkan",
            fallback=False,
            options={"vulkan.big_gemm": "huge", "vulkan.big_gemm_shader": "big"},
        )
        s.run({"x": np.zeros((300, 64), "float32")})


def test_a_discrete_gpus_default_takes_128x128_blocks_where_they_fill_it():
    """By default: 128x128 blocks on a discrete GPU where they give at least half its SMs a work
    group (BERT-base and ViT-S/16 at batch 16), gemm.comp (and split-K) where not (batch 1, a
    7x7 image's 49 columns), never on an integrated or CPU device; the option forces either way."""
    from types import SimpleNamespace

    from mnn_vulkan.kernels.matmul import BIG_GEMM, big_gemm_local

    def local(m, n, batch=1, kind="discrete", sms=0, **options):
        dev = SimpleNamespace(type=kind, name="NVIDIA H100 80GB HBM3", props={"sm_count": sms})
        options = {"vulkan.big_gemm_shader": "big"} | options
        return big_gemm_local(SimpleNamespace(device=dev, options=options, half=False), m, n, 768, batch)

    big = BIG_GEMM["128x128"]
    assert local(2048, 768) == big  # BERT-base b16: 16 x 6 = 96 groups
    assert local(16 * 197, 384) == big  # ViT-S/16 b16: 25 x 3 = 75
    # ConvNeXt-T b16's last stage, its rows folded (784): the first MLP GEMM (7 x 24), not the second (7 x 6)
    assert local(16 * 49, 3072) == big and local(16 * 49, 768) is None
    assert local(128, 768) is None and local(197, 1152) is None  # batch 1: 6 and 18 groups
    assert local(768, 49, batch=16) is None  # a 7x7 image's 49 columns
    assert local(2048, 768, kind="integrated") is None and local(2048, 768, kind="cpu") is None
    assert local(1024, 512, sms=32) == big and local(1024, 512) is None  # 32 groups: enough for 32 SMs
    assert local(2048, 768, **{"vulkan.big_gemm": "0"}) is None
    assert local(128, 768, **{"vulkan.big_gemm": "128x128"}) == big
    assert local(2048, 768, **{"vulkan.tiles": "big"}) is None


def test_the_default_runs_where_the_device_is_discrete(rng, monkeypatch):
    """lavapipe taken for a discrete GPU: a BERT-base b16-like Linear (2048 x 768 rows, 96 blocks) runs
    on gemm_big.comp by default, a batch-1 one (128 rows) on gemm.comp split along K; both right."""
    from mnn_vulkan import device

    monkeypatch.setattr(device.choose(None), "type", "discrete")
    for rows, shader in ((2048, "gemm_big"), (128, "splitk_reduce")):  # K 512: slices of at least 128
        b = mnn.GraphBuilder()
        x = b.input("x", (1, rows, 512))
        y = b.MatMul(x, b.const(rng.standard_normal((512, 768)).astype("float32")))
        b.output(b.Add(y, b.const(rng.standard_normal(768).astype("float32"))), "y")
        shaders = _check(b.build(), {"x": rng.standard_normal((1, rows, 512)).astype("float32")}, "default")
        assert shader in shaders and ("gemm_big" in shaders) == (rows == 2048), shaders


def test_a_channels_last_linear_with_layer_scale(rng):
    """ConvNeXt's MLP as the fusions see it (MatMul, bias, layer scale), its batch dims folded into
    rows, on 128x128 blocks."""
    k, n = 96, 150
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 9, 11, k))
    y = b.Add(
        b.MatMul(x, b.const(rng.standard_normal((k, n)).astype("float32"))),
        b.const(rng.standard_normal(n).astype("float32")),
    )
    b.output(b.Mul(y, b.const(rng.standard_normal(n).astype("float32"))), "y")
    x = rng.standard_normal((2, 9, 11, k)).astype("float32")
    assert "gemm_big" in _check(b.build(), {"x": x}, "128x128")


def _function_variables(code: bytes) -> int:
    """OpVariables of the Function storage class in a SPIR-V binary: arrays a driver may keep in
    memory rather than registers."""
    words = np.frombuffer(code, dtype="<u4")
    count, at = 0, 5  # after the header
    while at < len(words):
        length, opcode = int(words[at]) >> 16, int(words[at]) & 0xFFFF
        if opcode == 59 and int(words[at + 3]) == 7:  # OpVariable, StorageClass Function
            count += 1
        at += max(length, 1)
    return count


def test_registers_stay_registers():
    """gemm_big's accumulators and prefetched slices must reach the driver as SSA values: left as
    a Function array (sized or indexed by specialization constants, or indexed in a loop glslc
    keeps rolled), NVIDIA's compiler put them in local memory and the shader ran 7-8x slower
    than gemm.comp on an H100."""
    from mnn_core.backend.kit import spirv

    assert _function_variables(spirv.spirv("gemm_big")) == 0
    assert _function_variables(spirv.spirv("gemm")) > 0  # the check sees them where they are


def test_every_block_fits_the_prefetch_registers():
    """gemm_big.comp keeps at most MAX_PER = 16 prefetched words of A and of B an invocation
    (8 * BK / TX and 8 * BK / TY): a work group added to BIG_GEMM must stay within them."""
    from mnn_vulkan.kernels.matmul import BIG_GEMM

    for tx, ty, _ in BIG_GEMM.values():
        for bk in (8, 16):
            assert 8 * bk % tx == 0 and 8 * bk // tx <= 16
            assert 8 * bk % ty == 0 and 8 * bk // ty <= 16

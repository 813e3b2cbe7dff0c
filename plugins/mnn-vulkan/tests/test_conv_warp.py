"""conv_warp.comp (convolutions as implicit GEMMs on gemm_warp.comp's warp tiles; "vulkan.conv_warp")
against the reference: every block size, with and without 16-byte loads and stores, strides 1 and
2, padding, dilation, groups, odd heights and widths, K below one slice and not a multiple of 4,
more output channels or columns than one block, bias and a fused activation, forced split-K; and
the block and slices it picks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from vulkan_testing import check_vulkan, needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan

BLOCKS = ["128x128", "128x64", "64x128"]


def _conv(rng, n, c, h, w, o, kernel, stride=1, pad=1, dilation=1, group=1, bias=True, relu=True):
    b = mnn.GraphBuilder()
    x = b.input("x", (n, c, h, w))
    wt = b.const((rng.standard_normal((o, c // group, kernel, kernel)) / np.sqrt(c * kernel)).astype("float32"))
    bs = b.const(rng.standard_normal(o).astype("float32")) if bias else None
    y = b.Conv(x, wt, bs, strides=[stride] * 2, pads=[pad] * 4, dilations=[dilation] * 2, group=group)
    b.output(b.Relu(y) if relu else y, "y")
    return b.build(), {"x": rng.standard_normal((n, c, h, w)).astype("float32")}


CASES = {
    "3x3": dict(n=2, c=16, h=13, w=11, o=70, kernel=3),  # odd H and W, K = 144
    "3x3-stride2": dict(n=3, c=12, h=15, w=17, o=33, kernel=3, stride=2),
    "3x3-dilated": dict(n=1, c=8, h=19, w=9, o=140, kernel=3, pad=2, dilation=2),  # two blocks of rows
    "3x3-groups": dict(n=2, c=16, h=9, w=9, o=24, kernel=3, group=2),
    "3x3-one-channel": dict(n=2, c=1, h=23, w=21, o=20, kernel=3, bias=False, relu=False),  # K = 9
    "rgb-stem": dict(n=1, c=3, h=33, w=35, o=16, kernel=7, stride=2, pad=3),  # K = 147: scalar loads of W
    "1x1-stride2": dict(n=2, c=36, h=14, w=14, o=72, kernel=1, stride=2, pad=0),
}


@pytest.mark.parametrize("vec,bk", [(True, 16), (False, 16), (True, 8)], ids=["vec4", "scalar", "vec4-bk8"])
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_convolution(rng, case, block, vec, bk):
    graph, feeds = _conv(rng, **CASES[case])
    options = {"vulkan.conv_warp": block, "vulkan.big_gemm_vec": vec, "vulkan.big_gemm_bk": bk}
    assert "conv_warp" in check_vulkan(graph, feeds, options)


@pytest.mark.parametrize("block", BLOCKS)
def test_split_k(rng, block):
    """Slices of K summed by splitk_reduce.comp, which adds the bias and the activation."""
    graph, feeds = _conv(rng, n=1, c=40, h=10, w=12, o=66, kernel=3)
    shaders = check_vulkan(graph, feeds, {"vulkan.conv_warp": block, "vulkan.splitk": 3})
    assert "conv_warp" in shaders and "splitk_reduce" in shaders, shaders


def test_off_by_default_and_a_bad_value_is_named(rng):
    graph, feeds = _conv(rng, **CASES["3x3"])
    assert "conv_warp" not in check_vulkan(graph, feeds, {})
    with pytest.raises(Exception, match="vulkan.conv_warp must be"):
        check_vulkan(graph, feeds, {"vulkan.conv_warp": "huge"})


def test_the_block_and_slices_follow_the_sms():
    """ResNet-50's 3x3 layers at batch 16 on an H100 (132 SMs) under "auto": 64 output channels take
    64x128 blocks; 128 take half-size blocks (98 of 128x128); 256 and 512 also split K; at batch 1 the
    last stage stays on conv2d.comp (under one wave even split)."""
    from mnn_vulkan.kernels.conv import conv_warp_plan
    from mnn_vulkan.kernels.matmul import WARP_GEMM

    h100 = SimpleNamespace(type="discrete", name="NVIDIA H100", props={"sm_count": 132})
    rec = SimpleNamespace(device=h100, options={"vulkan.conv_warp": "auto"}, half=False)

    def plan(og, cols, k):
        found = conv_warp_plan(rec, og, cols, k, 1)
        if found is None:
            return None
        local, warps_n, splits = found
        return next(n for n, v in WARP_GEMM.items() if v == (local, warps_n)), splits

    assert plan(64, 16 * 56 * 56, 576) == ("64x128", 1)
    assert plan(128, 16 * 28 * 28, 1152) == ("64x128", 1)  # 196 blocks: 1.48 waves, no sum to pay for
    assert plan(256, 16 * 14 * 14, 2304) == ("64x128", 2)  # 100 blocks
    assert plan(512, 16 * 7 * 7, 4608) == ("64x128", 4)  # 56 blocks
    assert plan(512, 7 * 7, 4608) is None


def test_the_default_takes_64_channel_3x3s_at_batch_16():
    """By default on a discrete GPU: 3x3 stride-1 convolutions of at most 64 channels in and out whose
    64x128 blocks give 1.5 waves (ResNet-50's first stage at batch 16: 392 of them) on conv_warp.comp in
    K slices of 8; wider, strided, grouped, batch-8 or non-3x3 ones on conv2d.comp; never off a
    discrete GPU; "0" turns it off."""
    from mnn_vulkan.kernels.conv import _conv_warp_by_default, conv_warp_plan
    from mnn_vulkan.kernels.matmul import WARP_GEMM, warp_spec

    from mnn_core.backend.kit.params import ConvPlan

    h100 = SimpleNamespace(type="discrete", name="NVIDIA H100", props={"sm_count": 132, "max_shared_bytes": 49152})

    def taken(n, c, hw, o, kernel=3, stride=1, group=1, kind="discrete", **options):
        h100.type = kind
        rec = SimpleNamespace(device=h100, options=options, half=False)
        out = (hw + 2 * (kernel // 2) - kernel) // stride + 1
        geometry = dict(g=group, pads=(kernel // 2,) * 4, sh=stride, sw=stride, dh=1, dw=1)
        p = ConvPlan(
            n,
            c,
            hw,
            hw,
            o,
            c // group,
            kernel,
            kernel,
            out,
            out,
            **geometry,
            act=0,
            alpha=0.0,
            beta=0.0,
            has_bias=1,
            total=n * o * out * out,
        )
        og, k, cols = p.gemm
        found = conv_warp_plan(rec, og, cols, k, p.g, default=_conv_warp_by_default(rec, p))
        if found is None:
            return None
        local, warps_n, splits = found
        bk = warp_spec(h100, options, local, warps_n, k)[2]
        return next(name for name, v in WARP_GEMM.items() if v == (local, warps_n)), splits, bk

    assert taken(16, 64, 56, 64) == ("64x128", 1, 8)
    assert taken(8, 64, 56, 64) is None  # 196 blocks: under 1.5 waves
    assert taken(16, 128, 28, 128) is None and taken(16, 64, 56, 128) is None and taken(16, 128, 56, 64) is None
    assert taken(16, 64, 56, 64, stride=2) is None and taken(16, 64, 56, 64, group=2) is None
    assert taken(16, 64, 56, 64, kernel=5) is None and taken(16, 3, 224, 64, kernel=7, stride=2) is None
    assert taken(16, 64, 56, 64, kind="integrated") is None and taken(16, 64, 56, 64, kind="cpu") is None
    assert taken(16, 64, 56, 64, **{"vulkan.conv_warp": "0"}) is None
    assert taken(16, 64, 56, 64, **{"vulkan.conv_warp": 0}) is None  # as tools/sweep_tiling.py passes it


def test_fill_splits_k_until_the_sms_hold_that_many_groups():
    """ "vulkan.conv_warp_fill": K cut (slices of at least 128, at most 8) until the blocks give that many
    work groups per SM, also where they already give one per SM; the rule before without it."""
    from mnn_vulkan.kernels.conv import warp_splits

    h100 = SimpleNamespace(type="discrete", props={"sm_count": 132})
    fill6 = {"vulkan.conv_warp_fill": 6}
    # ResNet-50 b16's 128-channel 3x3 (196 blocks of 64x128, K = 1152): whole before, 5 slices for 6 per SM
    assert warp_splits(h100, {}, 196, 1152) == 1 and warp_splits(h100, fill6, 196, 1152) == 5
    assert warp_splits(h100, fill6, 56, 4608) == 8  # at most 8
    assert warp_splits(h100, fill6, 196, 300) == 2  # slices of at least 128
    assert warp_splits(h100, fill6, 800, 1152) == 1  # enough already
    assert warp_splits(SimpleNamespace(type="cpu", props={}), fill6, 196, 1152) == 1


@pytest.mark.parametrize("block", ["64x128", "128x64"])
def test_pointwise_folded_into_columns(rng, block):
    """ "vulkan.pointwise_fold": a 1x1 convolution of images smaller than that many pixels runs on
    conv_warp.comp with the images folded into the columns (here 3 images of 7x5), not per image."""
    graph, feeds = _conv(rng, n=3, c=40, h=7, w=5, o=70, kernel=1, pad=0)
    options = {"vulkan.conv_warp": block}
    assert "conv_warp" in check_vulkan(graph, feeds, options | {"vulkan.pointwise_fold": 36})
    assert "conv_warp" not in check_vulkan(graph, feeds, options | {"vulkan.pointwise_fold": 35})

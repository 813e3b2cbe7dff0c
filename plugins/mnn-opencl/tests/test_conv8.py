"""Convolutions as implicit GEMMs on 8x8 register blocks (kernels/gemm8.cl's conv8_<name>), forced
through "opencl.gemm8" (a CPU device keeps conv.cl's kernels by default), against the reference
backend: strides, pads, dilations, odd sizes, several images, K below one slice, every activation,
K split into slices; and when a GPU takes them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend, run_conv

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

CASES = [
    ((2, 5, 9, 7), (11, 5, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((3, 6, 11, 9), (70, 6, 3, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1], "dilations": [1, 2]}),
    ((2, 3, 23, 21), (9, 3, 7, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}),  # a stem
    ((2, 33, 5, 6), (17, 33, 1, 1), {}),  # 1x1
    ((3, 40, 7, 9), (130, 40, 1, 1), {"strides": [2, 2]}),  # 1x1 stride 2 (a downsample), M past a block
    ((1, 1, 5, 3), (4, 1, 1, 1), {}),  # K = 1, below one slice
    ((2, 20, 6, 5), (66, 20, 3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
]
IDS = ["3x3", "stride-dilation", "stem-7x7", "1x1", "1x1-stride2", "k1", "dilated-pad2"]
ACTS = [
    {},
    {"activation": "relu"},
    {"activation": "clip", "act_alpha": -0.5, "act_beta": 0.5},
    {"activation": "leaky_relu", "act_alpha": 0.1},
    {"activation": "sigmoid"},
    {"activation": "silu"},
    {"activation": "gelu"},
    {"activation": "tanh"},
    {"activation": "hard_sigmoid", "act_alpha": 0.2, "act_beta": 0.5},
    {"activation": "hard_swish"},
]


@needs_opencl
@pytest.mark.parametrize("block", ["b128", "b64", "n64", "n96"])
@pytest.mark.parametrize("slices", [1, 3])
@pytest.mark.parametrize("shape, wshape, attrs", CASES, ids=IDS)
def test_conv8_matches_reference(rng, block, slices, shape, wshape, attrs):
    options = {"opencl.gemm8": block, "opencl.gemm8_slices": slices}
    kernels = run_conv(rng, shape, wshape, {**attrs, "activation": "relu"}, options, bias=slices == 1)
    k = wshape[1] * wshape[2] * wshape[3]
    assert kernels == [f"conv8_{block}"] + (["splitk_reduce"] if min(slices, k) > 1 else [])


@needs_opencl
@pytest.mark.parametrize("slices", [1, 3])
@pytest.mark.parametrize("shape, wshape, attrs", CASES, ids=IDS)
def test_conv4_matches_reference(rng, slices, shape, wshape, attrs):
    """kernels/conv4.cl's 64x64 blocks of 4x4 tiles (opencl.conv4=all), K whole or in 3 slices."""
    options = {"opencl.conv4": "all", "opencl.gemm8_slices": slices}
    kernels = run_conv(rng, shape, wshape, {**attrs, "activation": "relu"}, options, bias=slices == 1)
    k = wshape[1] * wshape[2] * wshape[3]
    assert kernels == ["conv4_c64"] + (["splitk_reduce"] if min(slices, k) > 1 else [])


@needs_opencl
@pytest.mark.parametrize("slices", [1, 3])
@pytest.mark.parametrize(
    "shape, wshape, attrs",
    [
        ((2, 33, 5, 6), (17, 33, 1, 1), {}),
        ((3, 20, 9, 8), (70, 20, 1, 1), {}),
        ((3, 40, 7, 9), (13, 40, 1, 1), {"strides": [2, 2]}),
    ],
    ids=["1x1", "1x1-70", "1x1-stride2-keeps-the-table"],
)
def test_conv4_pointwise_matches_reference(rng, slices, shape, wshape, attrs):
    """opencl.conv4_pw=on: 1x1s of stride 1 without padding read the input straight (conv4p_c64)."""
    options = {"opencl.conv4": "all", "opencl.conv4_pw": "on", "opencl.gemm8_slices": slices}
    kernels = run_conv(rng, shape, wshape, {**attrs, "activation": "relu"}, options, bias=slices == 1)
    name = "conv4_c64" if attrs else "conv4p_c64"
    assert kernels == [name] + (["splitk_reduce"] if slices > 1 else [])


@needs_opencl
def test_conv4_3x3_leaves_1x1s_and_groups(rng):
    options = {"opencl.conv4": "3x3"}
    assert run_conv(rng, (2, 33, 5, 6), (17, 33, 1, 1), {}, options) == ["conv1x1_oc4"]
    assert run_conv(rng, (2, 8, 6, 5), (12, 8, 3, 3), {"pads": [1, 1, 1, 1]}, options) == ["conv4_c64"]
    assert run_conv(rng, (2, 8, 6, 5), (16, 4, 3, 3), {"group": 2}, options) == ["conv2d_oc4"]


@needs_opencl
@pytest.mark.parametrize("act", ACTS, ids=[a.get("activation", "none") for a in ACTS])
def test_conv8_fused_activations(rng, act):
    for slices in (1, 2):
        for options in ({"opencl.gemm8": "b64"}, {"opencl.conv4": "all"}):
            run_conv(
                rng,
                (2, 7, 6, 5),
                (13, 7, 3, 3),
                {"pads": [1, 1, 1, 1], **act},
                {**options, "opencl.gemm8_slices": slices},
            )


@needs_opencl
def test_conv8_off_and_groups_keep_conv_kernels(rng):
    assert run_conv(rng, (2, 8, 6, 5), (12, 8, 3, 3), {}, {"opencl.gemm8": "off", "opencl.conv4": "off"}) == [
        "conv2d_oc4"
    ]
    grouped = run_conv(rng, (2, 8, 6, 5), (16, 4, 3, 3), {"group": 2}, {"opencl.gemm8": "b128"})
    assert grouped == ["conv2d_oc4"]  # one group only


def _fake(is_gpu: bool, **options):
    device = {"compute_units": 132}  # an H100
    runtime = SimpleNamespace(is_gpu=is_gpu, entry=SimpleNamespace(device=device))
    return SimpleNamespace(runtime=runtime, options=options)


def test_conv_choice_on_a_gpu(monkeypatch):
    """ResNet-50 at batch 16 on an H100: 128x128 blocks where they give 66 work-groups, 64x128 ones
    where those do, else 64x128 ones with K split to reach a work-group per compute unit; a CPU
    device and small layers keep conv.cl's kernels."""
    monkeypatch.delenv("MNN_OPENCL_GEMM8", raising=False)  # the rule, not a forced choice
    from mnn_opencl.blocks8 import conv_choice

    gpu = _fake(True, **{"opencl.conv4": "off"})
    assert conv_choice(gpu, 64, 16 * 56 * 56, 576) == ("b64", 1)  # layer1's 3x3: 1 x 392 blocks of 128x128
    assert conv_choice(gpu, 128, 16 * 28 * 28, 1152) == ("b128", 1)  # layer2's 3x3: 98
    assert conv_choice(gpu, 256, 16 * 14 * 14, 2304) == ("b64", 1)  # layer3's 3x3: 50 of 128x128, 100 of 64x128
    assert conv_choice(gpu, 512, 16 * 7 * 7, 4608) == ("b64", 3)  # layer4's 3x3: 56 of 64x128, 3 slices
    assert conv_choice(gpu, 2048, 16 * 7 * 7, 512) == ("b128", 1)  # layer4's 1x1 up: 112
    fewer = _fake(True, **{"opencl.gemm8_b128_min": 198, "opencl.conv4": "off"})
    assert conv_choice(fewer, 128, 16 * 28 * 28, 1152) == ("b64", 1)
    assert conv_choice(gpu, 40, 49, 64) is None  # too small to fill a block
    assert conv_choice(_fake(False), 512, 16 * 7 * 7, 4608) is None
    assert conv_choice(_fake(True, **{"opencl.gemm8": "off", "opencl.conv4": "off"}), 128, 12544, 1152) is None
    auto = _fake(True)  # conv4 on a GPU, K split below 66 work-groups, to one per compute unit
    assert conv_choice(auto, 64, 16 * 56 * 56, 576) == ("c64", 1)  # 784 blocks of 64x64
    assert conv_choice(auto, 512, 16 * 7 * 7, 4608) == ("c64", 1)  # 104
    assert conv_choice(auto, 512, 7 * 7, 4608) == ("c64", 16)  # batch 1: 8 blocks, 16 slices
    assert conv_choice(auto, 64, 56 * 56, 576) == ("c64", 2)  # batch 1: 49 blocks, K 576
    wave = _fake(True, **{"opencl.conv4_split": "wave"})  # mnn-vulkan's: below 528 work-groups
    assert conv_choice(wave, 64, 16 * 56 * 56, 576) == ("c64", 1)  # 784 blocks of 64x64
    assert conv_choice(wave, 128, 16 * 28 * 28, 1152) == ("c64", 3)  # 392 blocks
    assert conv_choice(wave, 256, 16 * 14 * 14, 2304) == ("c64", 6)  # 196
    assert conv_choice(wave, 512, 16 * 7 * 7, 4608) == ("c64", 11)  # 104
    assert conv_choice(wave, 2048, 16 * 7 * 7, 512, window=False) == ("c64", 3)  # a 1x1: 416 blocks, K 512
    small = _fake(True, **{"opencl.conv4": "3x3"})
    assert conv_choice(small, 2048, 16 * 7 * 7, 512, window=False) == ("b128", 1)  # a 1x1: conv8
    assert conv_choice(_fake(False), 40, 49, 64) is None  # a CPU: conv.cl's kernels
    assert conv_choice(_fake(True, **{"opencl.gemm8": "b64"}), 64, 12544, 576) == ("b64", 1)  # forced blocks
    assert conv_choice(_fake(False, **{"opencl.conv4": "all"}), 40, 49, 64, window=False) == ("c64", 1)


def _residual_block(rng, act: str | None, bias: bool = True, res_first: bool = False, group: int = 1):
    """x -> Conv -> Add(residual r) -> act: a ResNet block's end (r a graph input of y's shape)."""
    inits = {"w": rng.uniform(-1, 1, (70, 6 // group, 3, 3)).astype("float32")}
    ins = ["x", "w"]
    if bias:
        inits["b"] = rng.uniform(-1, 1, 70).astype("float32")
        ins.append("b")
    nodes = [
        Node("Conv", ins, ["c"], {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": group}, "conv"),
        Node("Add", ["r", "c"] if res_first else ["c", "r"], ["s"], {}, "add"),
    ]
    if act:
        nodes.append(Node(act, ["s"], ["y"], {"alpha": 0.1} if act == "LeakyRelu" else {}, "act"))
    graph = Graph(
        inputs={"x": TensorInfo((3, 6, 11, 9), "float32"), "r": TensorInfo((3, 70, 6, 5), "float32")},
        initializers=inits,
        nodes=nodes,
        outputs=["y" if act else "s"],
    )
    feeds = {
        "x": rng.uniform(-1, 1, (3, 6, 11, 9)).astype("float32"),
        "r": rng.uniform(-1, 1, (3, 70, 6, 5)).astype("float32"),
    }
    return graph, feeds


@needs_opencl
@pytest.mark.parametrize(
    "options, kernels",
    [
        ({"opencl.gemm8": "off", "opencl.conv4": "off"}, ["conv2d_oc4", "binary_same", "unary"]),
        ({"opencl.gemm8": "b64"}, ["conv8_b64"]),
        ({"opencl.gemm8": "b128", "opencl.gemm8_slices": 3}, ["conv8_b128", "splitk_reduce"]),
        ({"opencl.conv4": "3x3"}, ["conv4_c64"]),
        ({"opencl.conv4": "all", "opencl.gemm8_slices": 2}, ["conv4_c64", "splitk_reduce"]),
    ],
    ids=["conv-kernels", "conv8", "conv8-split", "conv4", "conv4-split"],
)
@pytest.mark.parametrize("act", ["Relu", "LeakyRelu", None])
@pytest.mark.parametrize("bias, res_first", [(True, False), (False, True)], ids=["bias", "no-bias-res-first"])
def test_residual_and_activation_fused_into_conv(rng, options, kernels, act, bias, res_first):
    graph, feeds = _residual_block(rng, act, bias, res_first)
    sess = Session(graph, backend="opencl", fallback=False, optimize=False, options=options)
    got = sess.run(feeds)
    want = Session(graph, backend="reference").run(feeds)
    names = ["conv", "add"] + (["act"] if act else [])
    assert sess.plan.fused == {"+".join(names): names}
    if act is None:
        kernels = [k for k in kernels if k != "unary"]
    assert opencl_backend().segments[-1]["kernels"] == kernels
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)


@needs_opencl
@pytest.mark.parametrize("act", ["Relu", None])
def test_residual_fused_into_a_grouped_conv(rng, act):
    """Groups of 35 outputs run conv2d_c1, which stores y alone: the residual and the activation follow it."""
    graph, feeds = _residual_block(rng, act, group=2)
    sess = Session(graph, backend="opencl", fallback=False, optimize=False)
    got = sess.run(feeds)
    assert len(sess.plan.fused) == 1
    assert opencl_backend().segments[-1]["kernels"] == ["conv2d_c1", "binary_same"] + (["unary"] if act else [])
    want = Session(graph, backend="reference").run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)


@needs_opencl
def test_what_is_not_fused_into_conv(rng):
    graph, feeds = _residual_block(rng, "Relu")
    graph.outputs.append("c")  # the convolution's output is read outside too
    sess = Session(graph, backend="opencl", fallback=False, optimize=False, options={"opencl.gemm8": "b64"})
    got = sess.run(feeds)
    assert sess.plan.fused == {}
    want = Session(graph, backend="reference").run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)
    graph, feeds = _residual_block(rng, "Relu")
    graph.inputs["r"] = TensorInfo((1, 70, 1, 1), "float32")  # a broadcast operand: a bias, not a residual
    feeds["r"] = feeds["r"][:1, :, :1, :1].copy()
    sess = Session(graph, backend="opencl", fallback=False, optimize=False, options={"opencl.gemm8": "b64"})
    got = sess.run(feeds)
    assert sess.plan.fused == {}
    np.testing.assert_allclose(got["y"], Session(graph, backend="reference").run(feeds)["y"], rtol=1e-4, atol=1e-4)

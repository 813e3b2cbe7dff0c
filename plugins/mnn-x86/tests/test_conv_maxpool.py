"""The fused stem: a convolution the direct kernel runs and the max pooling after it, as one op
(mnn_x86/fuse.py, x86.ConvMaxPool; csrc/conv_direct_impl.h: direct_conv_pool).

Oracles: the same session unfused (Session(fuse=False)) must give bit-identical results (the
convolution's sums are the same, and a max is exact), and both match the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, fused_and_plain
from mnn_x86 import isa as x86_isa
from mnn_x86 import ops_conv
from test_bf16 import BUILD_MODELS, _models

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session


def _graph(rng, n, c, o, h, w, conv_attrs, pool_attrs, conv_output=False):
    g = Graph(name="stem")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    kh, kw = conv_attrs["kernel_shape"]
    g.initializers["w"] = (rng.standard_normal((o, c, kh, kw)) * 0.3).astype(np.float32)
    g.initializers["b"] = rng.standard_normal(o).astype(np.float32)
    g.nodes.append(Node("Conv", ["x", "w", "b"], ["y"], dict(conv_attrs), "conv"))
    g.nodes.append(Node("MaxPool", ["y"], ["z"], dict(pool_attrs), "pool"))
    g.outputs = ["z", "y"] if conv_output else ["z"]
    return g, {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}


def _reference(g, feeds):
    conv, pool = g.nodes
    y = run_reference("Conv", [feeds["x"], g.initializers["w"], g.initializers["b"]], conv.attrs)[0]
    return run_reference("MaxPool", [y], pool.attrs)[0]


STEM3 = {"kernel_shape": [3, 3], "strides": [2, 2], "activation": "relu"}  # SqueezeNet 1.1
STEM7 = {"kernel_shape": [7, 7], "strides": [2, 2], "pads": [3, 3, 3, 3], "activation": "relu"}  # ResNet-18
POOL3 = {"kernel_shape": [3, 3], "strides": [2, 2]}


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,conv,pool",
    [
        (1, 3, 64, 61, 61, STEM3, POOL3),  # SqueezeNet's stem and pooling, smaller: 30 -> 14 rows
        (1, 3, 64, 44, 44, STEM7, {**POOL3, "pads": [1, 1, 1, 1]}),  # ResNet-18's
        (2, 3, 13, 37, 29, STEM3, POOL3),  # two images, a partial channel block, odd widths
        (
            1,
            3,
            16,
            25,
            31,
            # no activation, stride 1 (rows of 31: a fuller direct tile than ops_conv.ROWS_MAX_LANE_USE)
            {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
            {"kernel_shape": [2, 2], "strides": [2, 2]},
        ),  # 2x2 windows
        (
            1,
            4,
            16,
            23,
            27,
            {**STEM3, "activation": "clip", "act_alpha": 0.0, "act_beta": 0.5},
            {**POOL3, "ceil_mode": 1},
        ),  # ceil_mode: the last window overhangs
        (1, 3, 24, 40, 31, STEM3, {"kernel_shape": [3, 2], "strides": [1, 2], "pads": [2, 0, 1, 1]}),
        (1, 3, 64, 224, 224, STEM3, POOL3),  # SqueezeNet's, whole
    ],
)
def test_fused_stem_matches_unfused_and_reference(rng, isa, threads, n, c, o, h, w, conv, pool):
    g, feeds = _graph(rng, n, c, o, h, w, conv, pool)
    fused, plain = fused_and_plain(g, isa, threads)
    got, want = fused.run(feeds)["z"], plain.run(feeds)["z"]
    # the scalar kernels have no fused op (their pooling has no stride-2 register path)
    assert fused.plan.fused == ({} if isa == "scalar" else {"conv+pool": ["conv", "pool"]})
    assert plain.plan.fused == {} and [p.op for p in plain.plan] == ["Conv", "MaxPool"]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(fused.run(feeds)["z"], got)  # a second run: the scratch reused


@pytest.mark.skipif("avx512" not in x86_isa.supported(), reason="the rule is AVX-512's (this CPU lacks it)")
@pytest.mark.parametrize("threads", [1, 2])
def test_fused_stride2_of_many_channels(rng, threads):
    """With x86.direct_oc off, on AVX-512 the direct kernel takes stride-2 kernels of up to
    ops_conv.DIRECT_MAX_CHANNELS_S2 input channels, so such a convolution and its pooling fuse too:
    bit-identical to the unfused session, and the reference's. Under auto the output-channel direct kernel
    runs the convolution, and nothing fuses."""
    c = ops_conv.DIRECT_MAX_CHANNELS_S2
    g, feeds = _graph(rng, 2, c, 20, 27, 33, {**STEM3, "pads": [1, 1, 1, 1]}, POOL3)
    kw = {"backend": "x86", "fallback": False, "threads": threads}
    off = {"x86.isa": "avx512", "x86.direct_oc": "off"}
    fused, plain = Session(g, **kw, options=off), Session(g, **kw, options=off, fuse=False)
    got, want = fused.run(feeds)["z"], plain.run(feeds)["z"]
    assert fused.plan.fused == {"conv+pool": ["conv", "pool"]}
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4)
    auto = Session(g, **kw, options={"x86.isa": "avx512"})
    assert auto.plan.fused == {}
    np.testing.assert_allclose(auto.run(feeds)["z"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "why,conv,pool,kw",
    [
        ("the convolution's output is a graph output", STEM3, POOL3, {"conv_output": True}),
        ("stride 1 across", STEM3, {"kernel_shape": [3, 3], "strides": [2, 1]}, {}),
        ("dilated windows", STEM3, {**POOL3, "dilations": [2, 2]}, {}),
        ("4 wide", STEM3, {"kernel_shape": [4, 4], "strides": [2, 2]}, {}),
        ("a GEMM convolution (many channels)", {**STEM3, "ch": ops_conv.DIRECT_MAX_CHANNELS_S2 + 1}, POOL3, {}),
    ],
)
def test_what_is_not_fused(rng, why, conv, pool, kw):
    c = conv.get("ch", 3)
    conv = {k: v for k, v in conv.items() if k != "ch"}
    g, feeds = _graph(rng, 1, c, 16, 33, 35, conv, pool, **kw)
    sess = Session(g, backend="x86")
    assert sess.plan.fused == {}, why
    out = sess.run(feeds)
    np.testing.assert_allclose(out["z"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not BUILD_MODELS.exists(), reason="examples/build_models.py is not in this checkout")
@pytest.mark.skipif(x86_isa.choose({}) == "scalar", reason="the scalar kernels fuse nothing")
def test_models_fuse_their_stems():
    """SqueezeNet 1.1 and ResNet-18 (examples/build_models.py) each fuse their stem and first pooling;
    SqueezeNet also its classifier and the global pooling after it (test_conv_gap.py)."""
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    expected = {
        "squeezenet1_1": [["conv", "maxpool"], ["conv_25", "globalaveragepool"]],
        "resnet18": [["conv", "maxpool"]],
    }
    for name in ("squeezenet1_1", "resnet18"):
        g = _models()[name](1)
        fused, plain = Session(g, backend="x86"), Session(g, backend="x86", fuse=False)
        assert list(fused.plan.fused.values()) == expected[name]
        (out,) = fused.run({"input": x}).values()
        # the classifier's sums run in another order fused (pixels as the tiles' rows), so not bit for bit
        np.testing.assert_allclose(out, next(iter(plain.run({"input": x}).values())), rtol=1e-5, atol=1e-6)

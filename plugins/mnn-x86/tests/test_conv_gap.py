"""A plain 1x1 convolution and the global average pooling after it, as one op (mnn_x86/fuse.py,
x86.ConvGlobalAvgPool; csrc/conv_gap_impl.h): register tiles of pixels x output channels, each
tile's activated rows added into the channels' sums; its output is never stored.

Oracles: the same session unfused (Session(fuse=False)) and the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, fused_and_plain
from mnn_x86 import isa as x86_isa

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.ops import run_reference
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _graph(rng, n, c, o, h, w, conv_attrs, bias=True, conv_output=False):
    g = Graph(name="head")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    kh, kw = conv_attrs.get("kernel_shape", [1, 1])
    g.initializers["w"] = (rng.standard_normal((o, c, kh, kw)) * 0.3).astype(np.float32)
    inputs = ["x", "w"]
    if bias:
        g.initializers["b"] = rng.standard_normal(o).astype(np.float32)
        inputs.append("b")
    g.nodes.append(Node("Conv", inputs, ["y"], dict(conv_attrs), "conv"))
    g.nodes.append(Node("GlobalAveragePool", ["y"], ["z"], {}, "gap"))
    g.outputs = ["z", "y"] if conv_output else ["z"]
    return g, {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}


def _reference(g, feeds):
    conv, pool = g.nodes
    y = run_reference("Conv", [feeds[n] if n in feeds else g.initializers[n] for n in conv.inputs], conv.attrs)[0]
    return run_reference("GlobalAveragePool", [y], pool.attrs)[0]


ONE = {"kernel_shape": [1, 1]}


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,conv,bias",
    [
        (1, 64, 100, 13, 13, {**ONE, "activation": "relu"}, True),  # SqueezeNet's classifier, smaller
        (2, 19, 37, 9, 11, ONE, True),  # two images, odd channels (a partial row panel), 99 pixels
        (1, 8, 5, 17, 4, {**ONE, "activation": "clip", "act_alpha": -0.2, "act_beta": 0.3}, False),
        (3, 33, 70, 12, 12, {**ONE, "activation": "sigmoid"}, True),  # more blocks than threads
        (1, 48, 16, 40, 40, {**ONE, "activation": "relu"}, True),  # 1600 pixels
        (1, 40, 80, 7, 7, {**ONE, "activation": "clip", "act_alpha": 0.0, "act_beta": 6.0}, True),  # MobileNetV2's
        (2, 24, 33, 3, 5, {**ONE, "activation": "gelu"}, True),  # 15 pixels: tiles of 8 and 7 under 14 rows
        (1, 300, 50, 1, 1, ONE, True),  # one pixel: a tile of one row, over a long K
        (2, 17, 49, 8, 8, {**ONE, "activation": "hard_swish"}, False),  # 64 pixels
    ],
)
def test_fused_head_matches_unfused_and_reference(rng, isa, threads, n, c, o, h, w, conv, bias):
    g, feeds = _graph(rng, n, c, o, h, w, conv, bias)
    fused, plain = fused_and_plain(g, isa, threads)
    got, want = fused.run(feeds)["z"], plain.run(feeds)["z"]
    assert fused.plan.fused == ({} if isa == "scalar" else {"conv+gap": ["conv", "gap"]})  # scalar: no fusions
    assert plain.plan.fused == {} and [p.op for p in plain.plan] == ["Conv", "GlobalAveragePool"]
    assert got.shape == (n, o, 1, 1)
    # fused and plain tiles sum K (= c here) in different orders (a one-row tile keeps four
    # accumulator chains), so their rounding differs by about sqrt(K) ulps of the terms
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, np.sqrt(c)))
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(fused.run(feeds)["z"], got)  # a second run


def _isa(level):
    return pytest.param(
        level, marks=pytest.mark.skipif(level not in x86_isa.supported(), reason=f"this CPU does not run {level}")
    )


@pytest.mark.parametrize("isa", [_isa("avx512"), _isa("avx2")])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n,c,mid,o,hw", [(1, 8, 24, 40, 7), (2, 5, 70, 33, 5), (1, 16, 32, 64, 13)])
def test_an_nc16_input(rng, isa, threads, n, c, mid, o, hw):
    """Under NC16 a 1x1 before the fused op writes its output in channel blocks (layouts.py), and the
    fused op reads them: channel c of pixel p at block c / 16, lane c % 16, pixels 16 floats apart
    (24 and 70 channels: a last block partly padding)."""
    g, feeds = _graph(rng, n, mid, o, hw, hw, {**ONE, "activation": "relu"})
    g.inputs["x"] = TensorInfo((n, c, hw, hw), "float32")
    g.initializers["w0"] = (rng.standard_normal((mid, c, 1, 1)) * 0.3).astype(np.float32)
    g.nodes.insert(0, Node("Conv", ["x", "w0"], ["h"], dict(ONE), "conv0"))
    g.nodes[1].inputs[0] = "h"
    feeds = {"x": rng.standard_normal((n, c, hw, hw)).astype(np.float32)}
    kw = {"backend": "x86", "fallback": False, "threads": threads}
    on = Session(g, **kw, options={"x86.isa": isa, "x86.layouts": "on"})
    off = Session(g, **kw, options={"x86.isa": isa, "x86.layouts": "off"})
    assert on.plan.fused == {"conv+gap": ["conv", "gap"]} and on.plan.layouts == {"h": 1}, str(on.plan)
    got = on.run(feeds)["z"]
    np.testing.assert_allclose(got, off.run(feeds)["z"], rtol=1e-5, atol=1e-6)
    ref = Session(g, backend="reference").run(feeds)["z"]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "why,conv,hw,kw",
    [
        ("the convolution's output is a graph output", ONE, 13, {"conv_output": True}),
        ("a 3x3 convolution", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, 13, {}),
        ("a strided 1x1", {**ONE, "strides": [2, 2]}, 13, {}),
        ("a padded 1x1", {**ONE, "pads": [1, 1, 1, 1]}, 13, {}),
        ("two groups", {**ONE, "group": 2}, 13, {}),
    ],
)
def test_what_is_not_fused(rng, why, conv, hw, kw):
    c = 16
    g, feeds = _graph(rng, 1, c, 24, hw, hw, conv, **kw)
    if conv.get("group"):  # grouped: weights of c / group input channels
        g.initializers["w"] = g.initializers["w"][:, : c // conv["group"]].copy()
    sess = Session(g, backend="x86", fallback=False)
    assert sess.plan.fused == {}, why
    np.testing.assert_allclose(sess.run(feeds)["z"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


def test_weights_computed_by_the_graph_are_not_fused(rng):
    """The fused op packs constant weights at prepare; a weight the graph computes keeps the Conv."""
    g, feeds = _graph(rng, 1, 16, 24, 13, 13, ONE)
    g.inputs["w"] = TensorInfo((24, 16, 1, 1), "float32")
    feeds["w"] = g.initializers.pop("w")
    sess = Session(g, backend="x86", fallback=False)
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["z"], _reference(g, feeds), rtol=1e-4, atol=1e-4)


def test_bf16_gemms_are_not_fused(rng):
    """Under precision="low" (bf16 GEMMs, where the CPU has AVX-512 BF16) the fused op, which runs the
    fp32 GEMM, leaves the convolution to the bf16 path."""
    from mnn_x86 import _x86

    if _x86 is None or not _x86.bf16_runs("avx512"):
        pytest.skip("this CPU does not run the bf16 GEMMs")
    g, feeds = _graph(rng, 1, 64, 40, 13, 13, {**ONE, "activation": "relu"})
    sess = Session(g, backend="x86", fallback=False, precision="low")
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["z"], _reference(g, feeds), rtol=3e-2, atol=3e-2)

"""A depthwise convolution and the Transpose to channels-last after it, as one op (mnn_x86/fuse.py,
x86.DepthwiseNHWC; csrc/depthwise_cl_impl.h): the channels-last kernel stores each pixel's channels
where the transpose puts them (ConvNeXt's depthwise 7x7 and its permute before the LayerNorm).

Oracles: the same session unfused (Session(fuse=False)) and the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, fused_and_plain

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

K7 = {"kernel_shape": [7, 7], "pads": [3, 3, 3, 3]}
S2 = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}


def _graph(rng, n, c, h, w, attrs, act=None, bias=True, perm=(0, 2, 3, 1), after=False):
    """x -> depthwise (attrs, act) -> Transpose(perm) [-> Relu]"""
    g = Graph(name="dw_nhwc")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    kh, kw = attrs["kernel_shape"]
    g.initializers["w"] = (rng.standard_normal((c, 1, kh, kw)) / np.sqrt(kh * kw)).astype(np.float32)
    inputs = ["x", "w"]
    if bias:
        g.initializers["b"] = (rng.standard_normal(c) * 0.5).astype(np.float32)
        inputs.append("b")
    g.nodes.append(Node("Conv", inputs, ["dw"], {**attrs, "group": c, **(act or {})}, "dw"))
    g.nodes.append(Node("Transpose", ["dw"], ["t"], {"perm": list(perm)}, "t"))
    g.outputs = ["t"]
    if after:
        g.nodes.append(Node("Relu", ["t"], ["r"], {}, "r"))
        g.outputs = ["r"]
    return g, {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,h,w,attrs,act,bias",
    [
        (1, 96, 14, 14, K7, None, True),  # ConvNeXt's first stage, smaller
        (2, 48, 9, 11, K7, None, True),  # two images, odd sizes, 7x7 wider than the plane
        (1, 40, 17, 13, S2, {"activation": "relu"}, True),  # a last block of 8 channels (of 16 lanes)
        (3, 21, 12, 10, S2, {"activation": "hard_swish"}, False),  # an activation after the tiles; 5 spare lanes
        (1, 7, 31, 29, {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2]}, None, True),  # fewer channels than a vector
        (1, 32, 40, 60, {"kernel_shape": [3, 3], "pads": [2, 2, 2, 2], "dilations": [2, 2]}, None, True),  # dilated
        (1, 16, 64, 50, {"kernel_shape": [3, 5], "pads": [0, 2, 1, 0]}, None, True),  # uneven pads, many strips
    ],
)
def test_fused_matches_unfused_and_reference(rng, isa, threads, n, c, h, w, attrs, act, bias):
    g, feeds = _graph(rng, n, c, h, w, attrs, act, bias)
    fused, plain = fused_and_plain(g, isa, threads)
    if isa == "scalar":  # no fused ops in the scalar kernels
        assert fused.plan.fused == {}
        return
    assert fused.plan.fused == {"dw+t": ["dw", "t"]}, str(fused.plan)
    want = Session(g, backend="reference").run(feeds)["t"]
    for _ in range(2):  # the second run finds the scratch as the first left it
        got = fused.run(feeds)["t"]
        assert got.shape == want.shape == (n, *got.shape[1:3], c)
        # apart, the depthwise may take its plane path (few channels, wide 3x3 rows): another order of sums
        np.testing.assert_allclose(got, plain.run(feeds)["t"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "why", ["another permutation", "the convolution's output is also a graph output", "not depthwise"]
)
def test_what_is_not_fused(rng, why):
    perm = (0, 3, 1, 2) if why == "another permutation" else (0, 2, 3, 1)
    g, feeds = _graph(rng, 1, 16, 12, 12, K7, perm=perm)
    if why.startswith("the convolution's output"):
        g.outputs.append("dw")
    elif why == "not depthwise":  # two channels a group
        g.nodes[0].attrs["group"] = 8
        g.initializers["w"] = rng.standard_normal((16, 2, 7, 7)).astype(np.float32)
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx2"})
    assert sess.plan.fused == {}, why
    want = Session(g, backend="reference").run(feeds)
    for name, value in sess.run(feeds).items():
        np.testing.assert_allclose(value, want[name], rtol=1e-4, atol=1e-4)


def test_read_by_another_op(rng):
    """The fused op's output feeds the ops after it like the Transpose's did."""
    g, feeds = _graph(rng, 2, 32, 10, 10, K7, after=True)
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx2"})
    assert sess.plan.fused == {"dw+t": ["dw", "t"]}
    np.testing.assert_allclose(
        sess.run(feeds)["r"], Session(g, backend="reference").run(feeds)["r"], rtol=1e-4, atol=1e-4
    )

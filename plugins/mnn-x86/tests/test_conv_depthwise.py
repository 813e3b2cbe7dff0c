"""A plain 1x1 convolution and the depthwise convolution after it, as one op (mnn_x86/fuse.py,
x86.ConvDepthwise; csrc/pwdw_impl.h): the 1x1's tiles write a strip's padded rows into a scratch laid
out for the depthwise, which runs on them while they are in cache; the expanded tensor is never stored.

Oracles: the same session unfused (Session(fuse=False)) and the reference backend. The size rule
(fuse.PWDW_MIN_BYTES) is lowered so that small shapes fuse; the NC16 layout is forced on, so the
AVX2 kernels fuse too (auto keeps it to AVX-512)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS
from mnn_x86 import fuse, layouts

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)

ON = {"x86.layouts": "on"}
CLIP6 = {"activation": "clip", "act_alpha": 0.0, "act_beta": 6.0}


def _graph(rng, n, c, mid, h, w, dw_attrs, pw_act=None, dw_act=None, bias=True, before=False, after=False):
    """x -> [1x1 c -> c] -> 1x1 c -> mid (pw_act) -> depthwise (dw_attrs, dw_act) -> [1x1 mid -> 8]:
    `before` gives the fused op an NC16 input, `after` an NC16 output."""
    g = Graph(name="pwdw")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    k = dw_attrs.get("kernel_shape", [3, 3])

    def conv(name, x, o, i, kh, kw, attrs, act, with_bias=True):
        g.initializers[f"{name}_w"] = (rng.standard_normal((o, i, kh, kw)) / np.sqrt(i * kh * kw)).astype(np.float32)
        inputs = [x, f"{name}_w"]
        if with_bias:
            g.initializers[f"{name}_b"] = (rng.standard_normal(o) * 0.5).astype(np.float32)
            inputs.append(f"{name}_b")
        g.nodes.append(Node("Conv", inputs, [name], {**attrs, **(act or {})}, name))
        return name

    x = conv("pre", "x", c, c, 1, 1, {}, {"activation": "relu"}) if before else "x"
    y = conv("pw", x, mid, c, 1, 1, {}, pw_act, bias)
    y = conv("dw", y, mid, 1, k[0], k[1], {**dw_attrs, "group": mid}, dw_act, bias)
    g.outputs = [conv("post", y, 8, mid, 1, 1, {}, None) if after else y]
    return g, {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}


def _sessions(graph, isa, threads):
    kw = {"backend": "x86", "fallback": False, "threads": threads, "options": {"x86.isa": isa, **ON}}
    return Session(graph, **kw), Session(graph, **kw, fuse=False)


@pytest.fixture
def fuse_all(monkeypatch):
    monkeypatch.setattr(fuse, "PWDW_MIN_BYTES", 0)


S1 = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
S2 = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}


@pytest.mark.usefixtures("fuse_all")
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,mid,h,w,dw,pw_act,dw_act,bias",
    [
        (1, 16, 96, 30, 30, S2, CLIP6, CLIP6, True),  # MobileNetV2's first expansion, smaller
        (1, 24, 40, 29, 31, S1, {"activation": "relu"}, {"activation": "relu"}, True),  # odd sizes, 2.5 blocks
        (2, 8, 24, 17, 13, S2, None, {"activation": "hard_swish"}, True),  # two images; act after the tiles
        (1, 5, 33, 11, 9, {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2]}, {"activation": "sigmoid"}, None, False),
        (1, 16, 20, 12, 12, {**S1, "pads": [2, 2, 2, 2], "dilations": [2, 2]}, None, CLIP6, True),  # dilated
        (3, 16, 32, 9, 9, {"kernel_shape": [3, 3], "strides": [2, 2]}, None, None, True),  # no padding, 3 images
        (1, 12, 17, 10, 14, {"kernel_shape": [3, 3], "pads": [0, 2, 1, 0]}, CLIP6, None, True),  # uneven pads
        (1, 8, 64, 60, 100, S1, CLIP6, CLIP6, True),  # strips of a few rows: rows carried from strip to strip
        (1, 8, 48, 61, 101, S2, CLIP6, CLIP6, True),  # ... at stride 2, odd sizes
    ],
)
@pytest.mark.parametrize("before,after", [(False, False), (True, True)])
def test_fused_matches_unfused_and_reference(
    rng, isa, threads, n, c, mid, h, w, dw, pw_act, dw_act, bias, before, after
):
    g, feeds = _graph(rng, n, c, mid, h, w, dw, pw_act, dw_act, bias, before, after)
    fused, plain = _sessions(g, isa, threads)
    if isa == "scalar":  # no fused ops in the scalar kernels
        assert fused.plan.fused == {}
        return
    assert fused.plan.fused == {"pw+dw": ["pw", "dw"]}, str(fused.plan)
    # the fused op's sides: NC16 where a 1x1 writes its input or reads its output
    assert fused.plan.layouts == ({"pre": layouts.NC16, "dw": layouts.NC16} if before else {}), str(fused.plan)
    want = Session(g, backend="reference").run(feeds)[g.outputs[0]]
    for _ in range(2):  # the second run finds the scratch as the first left it
        got = fused.run(feeds)[g.outputs[0]]
        # the same tiles in the same order: bit-identical to the two kernels apart
        np.testing.assert_array_equal(got, plain.run(feeds)[g.outputs[0]])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_size_rule(rng):
    """Under PWDW_MIN_BYTES of expanded tensor the two convolutions stay apart (they meet in L2
    anyway); at or above it they fuse."""
    small, _ = _graph(rng, 1, 16, 32, 28, 28, S1)  # 100 KB
    big, _ = _graph(rng, 1, 16, 96, 56, 56, S2)  # 1.2 MB
    opts = {"options": {"x86.isa": "avx2", **ON}, "backend": "x86", "fallback": False}
    assert Session(small, **opts).plan.fused == {}
    assert Session(big, **opts).plan.fused == {"pw+dw": ["pw", "dw"]}


@pytest.mark.usefixtures("fuse_all")
@pytest.mark.parametrize(
    "why",
    [
        "the 1x1's output is also a graph output",
        "the depthwise's weights are an input",
        "the 1x1 is strided",
        "layouts off",
    ],
)
def test_what_is_not_fused(rng, why):
    g, feeds = _graph(rng, 1, 16, 32, 12, 12, S1, CLIP6, CLIP6)
    options = {"x86.isa": "avx2", **ON}
    if why.startswith("the 1x1's output"):
        g.outputs.append("pw")
    elif why.startswith("the depthwise's weights"):
        g.inputs["dw_w"] = TensorInfo((32, 1, 3, 3), "float32")
        feeds["dw_w"] = g.initializers.pop("dw_w")
    elif why.startswith("the 1x1 is strided"):
        g.nodes[0].attrs["strides"] = [2, 2]
    else:
        options["x86.layouts"] = "off"
    sess = Session(g, backend="x86", fallback=False, options=options)
    assert sess.plan.fused == {}, why
    want = Session(g, backend="reference").run(feeds)
    for name, value in sess.run(feeds).items():
        np.testing.assert_allclose(value, want[name], rtol=1e-4, atol=1e-4)

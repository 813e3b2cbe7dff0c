"""The direct convolution with the output channels along the vectors (csrc/conv_direct_oc_impl.h, option
x86.direct_oc): forced on for odd sizes, kernels, strides, pads, batches, channel counts that are not
multiples of its blocks, every fused activation and thread counts, on every ISA this CPU runs, against the
reference backend; and the rule that picks it under auto (YOLOv8n's downsampling 3x3s)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS
from mnn_x86 import isa as x86_isa
from mnn_x86 import ops_conv
from test_direct_conv import ACTS, _kinds
from test_infer_kernels import _r, _run_conv, conv_kinds  # noqa: F401  (conv_kinds: a fixture)
from test_nc16 import _check, _pw, _w

from mnn_core import GraphBuilder
from mnn_core.errors import BackendError

ON = {"x86.direct_oc": "on"}
#: the vector ISAs (the scalar table has no such kernel)
VECTOR_ISAS = [p for p in ISAS if p.values[0] != "scalar"]
AVX512 = pytest.mark.skipif("avx512" not in x86_isa.supported(), reason="the rule is AVX-512's (this CPU lacks it)")


def _expected(isa):
    """The kind a forced-on convolution runs as: the scalar table has no such kernel (im2col + GEMM, in
    either orientation)."""
    return "gemm" if isa == "scalar" else "direct_oc"


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,kernel,strides,pads",
    [
        (1, 16, 32, 20, 20, (3, 3), (2, 2), [1, 1, 1, 1]),  # YOLOv8n's 16 -> 32, smaller: rows of 10
        (2, 19, 37, 17, 23, (3, 3), (2, 2), [1, 1, 1, 1]),  # odd sizes, a partial block, 2 images
        (1, 9, 50, 9, 61, (3, 3), (2, 2), [0, 1, 2, 0]),  # asymmetric pads, rows of 31 (tiles 11, 10, 10)
        (1, 24, 16, 7, 7, (3, 3), (2, 2), [1, 1, 1, 1]),  # rows of 4, fewer outputs than a block
        (1, 13, 40, 14, 27, (5, 5), (2, 2), [2, 2, 2, 2]),  # 5x5 (the generic tap loop)
        (2, 20, 36, 14, 13, (2, 2), (2, 2), [0, 0, 0, 0]),  # ConvNeXt's 2x2 downsampling, an odd width
        (1, 12, 33, 11, 29, (3, 3), (1, 1), [1, 1, 1, 1]),  # stride 1
        (2, 10, 18, 15, 31, (3, 2), (3, 3), [0, 1, 1, 0]),  # stride 3, 3x2 kernel
        (1, 33, 8, 6, 50, (1, 1), (2, 2), [0, 0, 0, 0]),  # strided 1x1, fewer outputs than a vector
        (1, 11, 21, 13, 9, (3, 3), (2, 1), [1, 1, 1, 1]),  # stride 2 down only
        (1, 17, 24, 3, 3, (3, 3), (2, 2), [0, 0, 0, 0]),  # one output pixel
        (1, 40, 70, 25, 161, (3, 3), (2, 2), [1, 1, 1, 1]),  # rows of 81: 7 tiles, 3 blocks (the last partial)
    ],
)
def test_direct_oc_matches_reference(rng, conv_kinds, isa, threads, n, c, o, h, w, kernel, strides, pads):  # noqa: F811
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, *kernel, scale=0.2), _r(rng, o)
    _run_conv([x, wt, b], {"pads": pads, "strides": list(strides)}, isa, threads, ON)
    assert [k.replace("gemm_t", "gemm") for k in _kinds(conv_kinds)] == [_expected(isa)]


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("act,alpha,beta", ACTS)
@pytest.mark.parametrize("bias", [True, False])
def test_direct_oc_fused_activation(rng, conv_kinds, isa, act, alpha, beta, bias):  # noqa: F811
    """Every fused activation, with and without the bias, over full and partial tiles and blocks."""
    x, wt, b = _r(rng, 2, 20, 13, 37), _r(rng, 45, 20, 3, 3, scale=0.3), _r(rng, 45)
    attrs = {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": act, "act_alpha": alpha, "act_beta": beta}
    if bias:
        _run_conv([x, wt, b], attrs, isa, 2, ON)
    else:
        _run_conv([x, wt], attrs, isa, 2, ON, constant=(1,))
    assert _kinds(conv_kinds) == ["direct_oc"]


@pytest.mark.parametrize("isa", VECTOR_ISAS)
def test_direct_oc_bias_at_run(rng, conv_kinds, isa):  # noqa: F811
    """A bias that arrives as an input at run (constant weights): the kernel reads it each run."""
    x, wt, b = _r(rng, 1, 16, 19, 21), _r(rng, 24, 16, 3, 3, scale=0.3), _r(rng, 24)
    _run_conv([x, wt, b], {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": "relu"}, isa, 2, ON, constant=(1,))
    assert _kinds(conv_kinds) == ["direct_oc"]


@AVX512
@pytest.mark.parametrize("threads", [1, 2])
def test_auto_takes_stride2_kernels(rng, conv_kinds, threads):  # noqa: F811
    """Under auto on AVX-512, a stride-2 kernel larger than 1x1 of more than DIRECT_OC_MIN_CHANNELS input
    channels runs on this kernel (YOLOv8n's downsampling 3x3s, smaller, and odd sizes), one of fewer on the
    pixel-vector direct kernel (16 -> 32); with x86.direct_oc=off they keep what they ran before (the
    pixel-vector kernel up to DIRECT_MAX_CHANNELS_S2 channels, then the GEMM). All match the reference."""
    silu = {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": "silu"}
    layers = [(1, 16, 32, 40, 40), (2, 32, 64, 21, 19), (1, 64, 128, 20, 20), (1, 128, 256, 10, 10), (2, 17, 37, 9, 8)]
    for options in ({}, {"x86.direct_oc": "off"}):
        for n, c, o, h, w in layers:
            x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, 3, 3, scale=0.1), _r(rng, o)
            _run_conv([x, wt, b], silu, "avx512", threads, options)
    limit, least = ops_conv.DIRECT_MAX_CHANNELS_S2, ops_conv.DIRECT_OC_MIN_CHANNELS
    auto = ["direct_oc" if c > least else "direct" for _, c, _, _, _ in layers]
    before = ["direct" if c <= limit else "gemm" for _, c, _, _, _ in layers]
    kinds = [k.replace("gemm_t", "gemm") for k in _kinds(conv_kinds)]
    assert kinds == auto + before and auto.count("direct") == 1


@AVX512
def test_auto_leaves_the_rest(rng, conv_kinds):  # noqa: F811
    """What auto leaves to the other paths: few input channels (the stems: the pixel-vector direct kernel),
    stride 1, a stride of 2 down only, a strided 1x1 or 2x2, AVX2, x86.direct or x86.conv_t forced on. All match
    the reference."""
    same = {"pads": [1, 1, 1, 1], "strides": [2, 2]}
    x = _r(rng, 1, 24, 12, 12)
    w3, w1 = _r(rng, 16, 24, 3, 3, scale=0.2), _r(rng, 16, 24, 1, 1, scale=0.2)
    _run_conv([_r(rng, 1, 8, 12, 12), _r(rng, 16, 8, 3, 3)], same, "avx512", 1, {}, constant=(1,))
    _run_conv([x, w3], {"pads": [1, 1, 1, 1]}, "avx512", 1, {"x86.winograd": "off"}, constant=(1,))
    _run_conv([x, w3], {"strides": [2, 1]}, "avx512", 1, {}, constant=(1,))
    _run_conv([x, w1], {"strides": [2, 2]}, "avx512", 1, {}, constant=(1,))
    _run_conv([x, w3[:, :, :2, :2]], {"strides": [2, 2]}, "avx512", 1, {}, constant=(1,))
    _run_conv([x, w3], same, "avx512", 1, {"x86.direct": "on"}, constant=(1,))
    _run_conv([x, w3], same, "avx512", 1, {"x86.conv_t": "on"}, constant=(1,))
    if "avx2" in x86_isa.supported():
        _run_conv([x, w3], same, "avx2", 1, {}, constant=(1,))
    kinds = _kinds(conv_kinds)
    assert kinds[0] == "direct" and kinds[4] == "direct" and "direct_oc" not in kinds
    assert len(kinds) == 7 + ("avx2" in x86_isa.supported())


def test_direct_oc_choice(rng, conv_kinds):  # noqa: F811
    """Even with x86.direct_oc=on: groups, dilation and weights computed by the graph keep the GEMM. A bad
    value names the option."""
    x, wt = _r(rng, 1, 16, 12, 12), _r(rng, 8, 16, 3, 3)
    isa = "avx512" if "avx512" in x86_isa.supported() else "scalar"
    _run_conv([x, wt], {"dilations": [2, 2]}, isa, 1, ON, constant=(1,))
    _run_conv([x, wt[:, :8]], {"group": 2}, isa, 1, ON, constant=(1,))
    _run_conv([x, wt], {"strides": [2, 2]}, isa, 1, ON, constant=())
    assert "direct_oc" not in _kinds(conv_kinds)
    with pytest.raises(BackendError, match="x86.direct_oc"):
        _run_conv([x, wt], {}, isa, 1, {"x86.direct_oc": "sometimes"}, constant=(1,))


@pytest.mark.parametrize("isa", VECTOR_ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sides", [(True, True), (False, True), (True, False)])  # (NC16 input, NC16 output)
@pytest.mark.parametrize(
    "c,m,o,h,w,k,stride", [(32, 48, 40, 15, 17, 3, 2), (17, 20, 16, 9, 8, 3, 2), (24, 37, 16, 12, 11, 5, 3)]
)
def test_direct_oc_reads_and_writes_nc16(conv_kinds, isa, threads, sides, c, m, o, h, w, k, stride):  # noqa: F811
    """Between 1x1s (ResNet-50's stage entry: 1x1, 3x3 at stride 2, 1x1) the convolution reads and writes NC16
    (x86.layouts=on): the strip keeps the input's blocks, the tiles store into the output's; a graph input
    before it or a Sigmoid after it keeps that side dense. Odd sizes, partial blocks (17, 20, 37 and 40
    channels) and a 5x5 at stride 3. All match the reference."""
    rng = np.random.default_rng(5)
    g = GraphBuilder("stage_entry")
    x = g.input("x", (2, c, h, w))
    y = _pw(g, rng, x, c, c, act="relu") if sides[0] else x
    y = g.Conv(y, g.const(_w(rng, m, c, k, k)), g.const(_w(rng, m)), strides=[stride, stride], pads=[k // 2] * 4)
    y = _pw(g, rng, g.Relu(y), m, o) if sides[1] else g.Sigmoid(y)
    g.output(y, "y")
    feeds = {"x": rng.standard_normal((2, c, h, w)).astype(np.float32)}
    # auto on AVX-512 (the 1x1s on the pointwise kernel); elsewhere, and at stride 3, forced on for all three
    forced = {} if isa == "avx512" and stride == 2 else ON
    sess = _check(g.build(), feeds, isa, threads, options={"x86.layouts": "on", **forced}, atol=3e-5)
    assert len(sess.plan.layouts) == sum(sides), str(sess.plan)
    assert "direct_oc" in _kinds(conv_kinds)

"""The direct convolution for few input channels (csrc/conv_direct_impl.h, option x86.direct):
forced on for odd widths, kernels, strides, pads, batches, partial channel blocks and every fused
activation, on every ISA this CPU runs, against the reference backend; and the rule that picks it
(the stems of ResNet-18, SqueezeNet 1.1 and MobileNetV2) or leaves a convolution to the GEMM."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, one_op_graph
from mnn_x86 import _x86, ops_conv
from mnn_x86 import isa as x86_isa
from test_infer_kernels import _r, _run_conv, conv_kinds  # noqa: F401  (conv_kinds: a fixture)

from mnn_core.errors import BackendError
from mnn_core.ops import run_reference
from mnn_core.session import Session

ON = {"x86.direct": "on"}
ACTS = [
    ("relu", 0.0, 0.0),
    ("clip", 0.0, 6.0),
    ("leaky_relu", 0.1, 0.0),
    ("sigmoid", 0.0, 0.0),
    ("silu", 0.0, 0.0),
    ("gelu", 0.0, 0.0),
    ("tanh", 0.0, 0.0),
    ("hard_sigmoid", 0.2, 0.5),
    ("hard_swish", 0.0, 0.0),
]


def _kinds(seen):
    return [k.split(" ")[0].split(".")[-1] for k in seen]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,o,h,w,kernel,strides,pads",
    [
        (1, 3, 16, 1, 1, (1, 1), (1, 1), [0, 0, 0, 0]),  # width 1, one pixel
        (1, 3, 13, 5, 5, (3, 3), (1, 1), [1, 1, 1, 1]),  # width 5, a partial channel block
        (2, 3, 20, 17, 17, (5, 5), (2, 2), [2, 2, 2, 2]),  # width 17, batch 2
        (1, 4, 33, 9, 33, (7, 7), (2, 2), [3, 3, 3, 3]),  # width 33, padding wider than a third of the taps
        (1, 3, 64, 23, 111, (3, 3), (2, 2), [0, 0, 0, 0]),  # SqueezeNet's stem on a strip: 55 outputs a row
        (1, 1, 9, 12, 111, (3, 3), (1, 1), [0, 1, 2, 1]),  # one channel, asymmetric pads, width 111
        (1, 2, 8, 7, 33, (1, 1), (2, 2), [0, 0, 0, 0]),  # 1x1 of stride 2
        (1, 3, 5, 3, 3, (5, 5), (1, 1), [2, 2, 2, 2]),  # kernel wider than the input: mostly padding
        (1, 3, 10, 9, 20, (3, 5), (2, 1), [1, 2, 0, 1]),  # 3x5 kernel, vertical stride 2 only
        (1, 3, 7, 16, 35, (2, 2), (3, 2), [0, 0, 1, 1]),  # vertical stride 3 (rows need no split)
        (2, 3, 32, 30, 32, (3, 3), (2, 2), [1, 1, 1, 1]),  # MobileNetV2's stem, smaller
        (1, 3, 64, 40, 40, (7, 7), (2, 2), [3, 3, 3, 3]),  # ResNet-18's stem, smaller
        # stride 1 on short rows: one run over the rows (conv_direct_impl.h, dc_flat)
        (1, 24, 48, 36, 16, (3, 1), (1, 1), [0, 0, 0, 0]),  # 3x1, no horizontal padding: the run is the output
        (2, 21, 20, 34, 9, (1, 3), (1, 1), [0, 1, 0, 1]),  # 1x3 "same": through the scratch, odd sizes
        (1, 96, 96, 10, 2, (3, 1), (1, 1), [0, 0, 0, 0]),  # openWakeWord's 2-wide planes
        (1, 17, 19, 9, 7, (3, 3), (1, 1), [1, 1, 1, 1]),  # 3x3 on a 7x7 plane, a partial channel block
        (1, 9, 8, 40, 5, (3, 1), (1, 1), [2, 0, 1, 0]),  # vertical padding only, more rows than a strip
    ],
)
def test_direct_matches_reference(rng, conv_kinds, isa, threads, n, c, o, h, w, kernel, strides, pads):  # noqa: F811
    x, wt, b = _r(rng, n, c, h, w), _r(rng, o, c, *kernel, scale=0.3), _r(rng, o)
    _run_conv([x, wt, b], {"pads": pads, "strides": list(strides)}, isa, threads, ON)
    assert _kinds(conv_kinds) == ["direct"]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("act,alpha,beta", ACTS)
@pytest.mark.parametrize("bias", [True, False])
def test_direct_fused_activation(rng, conv_kinds, isa, act, alpha, beta, bias):  # noqa: F811
    """Every fused activation, with and without the bias, over full and partial tiles and blocks."""
    x, wt, b = _r(rng, 2, 3, 13, 37), _r(rng, 11, 3, 3, 3, scale=0.5), _r(rng, 11)
    attrs = {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": act, "act_alpha": alpha, "act_beta": beta}
    if bias:
        _run_conv([x, wt, b], attrs, isa, 2, ON)
    else:
        _run_conv([x, wt], attrs, isa, 2, ON, constant=(1,))
    assert _kinds(conv_kinds) == ["direct"]


@pytest.mark.parametrize("isa", ISAS)
def test_direct_bias_at_run(rng, conv_kinds, isa):  # noqa: F811
    """A bias that arrives as an input at run (constant weights): the kernel reads it each run."""
    x, wt, b = _r(rng, 1, 3, 19, 21), _r(rng, 24, 3, 3, 3, scale=0.3), _r(rng, 24)
    _run_conv([x, wt, b], {"pads": [1, 1, 1, 1], "activation": "relu"}, isa, 2, ON, constant=(1,))
    assert _kinds(conv_kinds) == ["direct"]


@pytest.mark.parametrize(
    "c,o,k,stride,pad",
    [(3, 64, 7, 2, 3), (3, 64, 3, 2, 0), (3, 32, 3, 2, 1)],
    ids=["resnet18", "squeezenet1_1", "mobilenet_v2"],
)
def test_auto_takes_the_stems(rng, conv_kinds, c, o, k, stride, pad):  # noqa: F811
    x, wt, b = _r(rng, 1, c, 224, 224), _r(rng, o, c, k, k, scale=0.2), _r(rng, o)
    attrs = {"pads": [pad] * 4, "strides": [stride, stride], "activation": "relu"}
    _run_conv([x, wt, b], attrs, "avx512" if "avx512" in _supported() else "scalar", 2, {})
    assert _kinds(conv_kinds) == ["direct"]


@pytest.mark.skipif("avx512" not in x86_isa.supported(), reason="the rule is AVX-512's (this CPU lacks it)")
def test_auto_gives_sparse_tiles_to_the_row_gemm(rng, conv_kinds):  # noqa: F811
    """Under auto on AVX-512, a stride-1 convolution whose direct tile would be mostly empty (LeNet's 5x5s:
    6 output channels of 28-pixel rows, 16 of 10-pixel rows) runs as the row GEMM, measured faster there
    (ops_conv.ROWS_MAX_LANE_USE); a fuller tile (16 channels of 32-pixel rows), a batch smaller than the
    threads, a stride of 2 and x86.direct=on keep the direct kernel. All match the reference."""
    lenet1 = [_r(rng, 16, 1, 28, 28), _r(rng, 6, 1, 5, 5, scale=0.3), _r(rng, 6)]
    lenet2 = [_r(rng, 16, 6, 14, 14), _r(rng, 16, 6, 5, 5, scale=0.3), _r(rng, 16)]
    relu = {"activation": "relu"}
    _run_conv(lenet1, {"pads": [2, 2, 2, 2], **relu}, "avx512", 1, {})
    _run_conv(lenet2, relu, "avx512", 2, {})
    _run_conv([_r(rng, 2, 4, 32, 32), _r(rng, 16, 4, 5, 5, scale=0.3)], {"pads": [2] * 4}, "avx512", 1, {}, (1,))
    _run_conv([lenet2[0][:1], *lenet2[1:]], relu, "avx512", 2, {})
    _run_conv(lenet2, {"strides": [2, 2]}, "avx512", 1, {})
    _run_conv(lenet1, {"pads": [2, 2, 2, 2]}, "avx512", 1, ON)
    assert _kinds(conv_kinds) == ["rows", "rows", "direct", "direct", "direct", "direct"]
    assert ops_conv.direct_lane_use(6, 28) < ops_conv.ROWS_MAX_LANE_USE <= ops_conv.direct_lane_use(16, 32)


@pytest.mark.skipif("avx512" not in x86_isa.supported(), reason="the rule is AVX-512's (this CPU lacks it)")
@pytest.mark.parametrize("threads", [1, 2])
def test_auto_takes_stride2_kernels_of_few_channels(rng, conv_kinds, threads):  # noqa: F811
    """With x86.direct_oc off (auto gives them to the output-channel direct kernel: test_direct_oc_conv.py), a
    stride-2 kernel larger than 1x1 runs on AVX-512 on the direct kernel up to DIRECT_MAX_CHANNELS_S2 input
    channels (YOLOv8's 16 -> 32 and 32 -> 64 downsampling 3x3s, odd sizes and a partial block of output
    channels here); more channels, a stride of 2 down only, a 1x1 of stride 2 and AVX2 keep the GEMM. All
    match the reference."""
    limit = ops_conv.DIRECT_MAX_CHANNELS_S2
    same = {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": "silu"}
    off = {"x86.direct_oc": "off"}
    for n, c, o, h, w in [(2, 16, 32, 21, 19), (1, limit, 37, 10, 33), (3, 24, 48, 9, 8)]:
        _run_conv([_r(rng, n, c, h, w), _r(rng, o, c, 3, 3, scale=0.2), _r(rng, o)], same, "avx512", threads, off)
    assert _kinds(conv_kinds) == ["direct"] * 3
    conv_kinds.clear()
    x, x16 = _r(rng, 2, limit + 1, 13, 11), _r(rng, 2, 16, 13, 11)
    _run_conv([x, _r(rng, 16, limit + 1, 3, 3, scale=0.2)], same, "avx512", threads, off, constant=(1,))
    _run_conv([x16, _r(rng, 16, 16, 3, 3, scale=0.2)], {"strides": [2, 1]}, "avx512", threads, off, (1,))
    _run_conv([x16, _r(rng, 16, 16, 1, 1, scale=0.2)], {"strides": [2, 2]}, "avx512", threads, off, (1,))
    if "avx2" in _supported():
        _run_conv([x16, _r(rng, 16, 16, 3, 3, scale=0.2)], same, "avx2", threads, off, constant=(1,))
    assert "direct" not in _kinds(conv_kinds) and len(conv_kinds) == 3 + ("avx2" in _supported())


def test_auto_takes_wide_1d_kernels(rng, conv_kinds):  # noqa: F811
    """Under auto, stride-1 1-D kernels of many channels run on the direct kernel (ops_conv._wide_1d_direct:
    openWakeWord's 3x1s and 1x3s): both on AVX-512, the vertical ones on AVX2; a 3x3, a stride of 2, one
    output pixel or K past DIRECT_MAX_TAPS_1D keep the GEMM. All match the reference."""
    x = _r(rng, 1, 48, 12, 8)
    w31, w13 = _r(rng, 48, 48, 3, 1, scale=0.2), _r(rng, 48, 48, 1, 3, scale=0.2)
    same13 = {"pads": [0, 1, 0, 1]}
    isas = [i for i in ("avx512", "avx2") if i in _supported()]
    for isa in isas:
        _run_conv([x, w31], {}, isa, 1, {}, constant=(1,))
        _run_conv([x, w13], same13, isa, 1, {}, constant=(1,))
    want = {"avx512": ["direct", "direct"], "avx2": ["direct", "gemm"]}
    assert _kinds(conv_kinds) == [k for isa in isas for k in want[isa]]
    conv_kinds.clear()
    isa = isas[0] if isas else "scalar"
    _run_conv([x, _r(rng, 48, 48, 3, 3, scale=0.2)], {"pads": [1] * 4}, isa, 1, {"x86.winograd": "off"}, (1,))
    _run_conv([x, w31], {"strides": [2, 2]}, isa, 1, {}, constant=(1,))
    _run_conv([x[:, :, :3, :1], w31], {}, isa, 1, {}, constant=(1,))  # one output pixel
    _run_conv([_r(rng, 1, 200, 12, 8), _r(rng, 8, 200, 3, 1, scale=0.1)], {}, isa, 1, {}, constant=(1,))  # K = 600
    assert "direct" not in _kinds(conv_kinds) and len(conv_kinds) == 4


def _supported():
    from mnn_x86 import isa as x86_isa

    return x86_isa.supported()


def test_direct_choice(rng, conv_kinds):  # noqa: F811
    """What keeps the GEMM (or another path): the option off, many input channels under auto, another
    path forced on or Winograd's own rule; and, even with x86.direct=on, groups, dilation, horizontal
    stride 3 and weights computed by the graph. A bad value names the option."""
    x3, w3 = _r(rng, 1, 3, 12, 12), _r(rng, 8, 3, 3, 3)
    x16, w16 = _r(rng, 1, 16, 12, 12), _r(rng, 8, 16, 3, 3)
    _run_conv([x3, w3], {}, "scalar", 1, {"x86.direct": "off"}, constant=(1,))
    _run_conv([x16, w16], {"strides": [2, 2]}, "scalar", 1, {}, constant=(1,))
    _run_conv([x3, w3], {"pads": [1, 1, 1, 1]}, "scalar", 1, {"x86.winograd": "on"}, constant=(1,))
    _run_conv([x16, w16], {"strides": [2, 2]}, "scalar", 1, ON, constant=(1,))  # on: any channel count
    x8, w8 = _r(rng, 1, 8, 12, 12), _r(rng, 8, 8, 3, 3)
    _run_conv([x8, w8], {"strides": [2, 2]}, "scalar", 1, {}, constant=(1,))  # 8 channels: direct
    _run_conv([x8, w8], {}, "scalar", 1, {}, constant=(1,))  # ... unless Winograd takes it
    _run_conv([x8, w8[:, :, :1, :1]], {}, "scalar", 1, {}, constant=(1,))  # ... or it is a 1x1
    for attrs in ({"dilations": [2, 2]}, {"strides": [1, 3]}):
        _run_conv([x3, w3], attrs, "scalar", 1, ON, constant=(1,))
    _run_conv([_r(rng, 1, 4, 12, 12), _r(rng, 8, 2, 3, 3)], {"group": 2}, "scalar", 1, ON, constant=(1,))
    kinds = _kinds(conv_kinds)
    assert kinds[2:6] == ["winograd", "direct", "direct", "winograd"]
    assert "direct" not in kinds[:2] + kinds[6:] and len(kinds) == 10
    with pytest.raises(BackendError, match="x86.direct"):
        _run_conv([x3, w3], {}, "scalar", 1, {"x86.direct": "sometimes"}, constant=(1,))


def test_direct_runtime_weights_keep_the_gemm(rng):
    """Weights computed by the graph (a training step's Conv) never reach the direct kernel."""
    x, wt = _r(rng, 1, 3, 10, 10), _r(rng, 6, 3, 3, 3)
    _run_conv([x, wt], {"pads": [1, 1, 1, 1]}, "scalar", 1, ON, constant=())


@pytest.mark.skipif(not _x86.bf16_runs("avx512"), reason="this CPU lacks AVX-512 BF16 (or AVX-512)")
def test_bf16_gemms_keep_their_convolutions(rng, conv_kinds):  # noqa: F811
    """Under precision="low" with bf16 GEMMs, auto leaves a stem to the bf16 GEMM; x86.direct=on keeps it
    fp32 (then it matches the fp32 reference to fp32 rounding)."""
    x, wt = _r(rng, 1, 3, 20, 20), _r(rng, 16, 3, 3, 3)
    attrs = {"pads": [1, 1, 1, 1], "strides": [2, 2]}
    for direct in ("auto", "on"):
        graph, feeds = one_op_graph("Conv", [x, wt], attrs, (1,))
        options = {"x86.isa": "avx512", "x86.direct": direct}
        sess = Session(graph, backend="x86", fallback=False, optimize=False, precision="low", options=options)
        got = sess.run(feeds)["out"]
        if direct == "on":
            np.testing.assert_allclose(got, run_reference("Conv", [x, wt], attrs)[0], rtol=1e-4, atol=1e-5)
    assert _kinds(conv_kinds) == ["gemm_bf16", "direct"]

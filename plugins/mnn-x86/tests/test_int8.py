"""x86 int8 QLinearConv, every ISA this CPU runs, bit-exact against the reference (docs/QUANT.md)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from mnn_x86 import isa as x86_isa

import mnn_core as mnn
from mnn_core.graph.builder import GraphBuilder

ISAS = x86_isa.supported()

CASES = [  # n, c, h, w, o, k, group, stride, pad, dilation, per_channel, bias
    (1, 3, 9, 7, 5, 3, 1, 1, 1, 1, True, True),
    (2, 6, 13, 11, 17, 5, 1, 2, 2, 1, True, True),
    (1, 8, 6, 6, 8, 3, 8, 1, 1, 1, True, True),  # depthwise
    (3, 4, 10, 10, 6, 3, 2, 1, 0, 2, False, False),  # groups, dilation, per-tensor, no bias
    (1, 1, 28, 28, 6, 5, 1, 1, 2, 1, True, True),  # LeNet's first layer
    (5, 400, 1, 1, 120, 1, 1, 1, 0, 1, True, True),  # fully connected form
    (1, 33, 1, 1, 7, 1, 1, 1, 0, 1, True, False),
    (300, 19, 1, 1, 9, 1, 1, 1, 0, 1, True, True),  # more images than one column block
]


def _graph(rng, n, c, h, w, o, k, group, stride, pad, dil, per_channel, bias, mult_half=False):
    b = GraphBuilder("q")
    x = b.input("x", (n, c, h, w), "uint8")
    wq = rng.integers(-127, 128, (o, c // group, k, k)).astype(np.int8)
    if mult_half:  # multipliers of exactly 0.5 and 0.25: many products end in .5, rounding ties
        sw = np.where(np.arange(o) % 2 == 0, 0.5, 0.25).astype(np.float32) if per_channel else np.float32(0.5)
        sx, sy = np.float32(1.0), np.float32(1.0)
    else:
        sw = rng.uniform(0.001, 0.02, o).astype(np.float32) if per_channel else np.float32(0.01)
        sx, sy = np.float32(0.03), np.float32(rng.uniform(0.05, 0.5))
    ins = [
        x,
        b.const(sx),
        b.const(np.uint8(rng.integers(0, 256))),
        b.const(wq),
        b.const(sw),
        b.const(np.int8(0)),
        b.const(sy),
        b.const(np.uint8(rng.integers(0, 256))),
    ]
    if bias:
        ins.append(b.const(rng.integers(-3000, 3000, o).astype(np.int32)))
    y = b.QLinearConv(*ins, strides=[stride, stride], pads=[pad] * 4, dilations=[dil, dil], group=group)
    b.output(y, "y")
    return b.build()


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("case", CASES, ids=[str(c[:10]) for c in CASES])
@pytest.mark.parametrize("ties", [False, True], ids=["random", "ties"])
def test_qlinearconv_bit_exact(isa, case, ties):
    rng = np.random.default_rng(sum(case[:6]))
    graph = _graph(rng, *case, mult_half=ties)
    x = rng.integers(0, 256, case[:4]).astype(np.uint8)
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    session = mnn.Session(graph, backend="x86", fallback=False, options={"x86.isa": isa})
    assert session.plan.backends() == {"x86": 1}
    got = session.run({"x": x})["y"]
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


def test_int8_kernel_declines_what_it_does_not_run():
    b = GraphBuilder("q")
    x = b.input("x", (1, 2, 5, 5), "uint8")
    w = b.const(np.ones((3, 2, 3, 3), np.int8))
    y = b.QLinearConv(
        x,
        b.const(np.float32(0.1)),
        b.const(np.uint8(0)),
        w,
        b.const(np.float32(0.1)),
        b.const(np.int8(0)),
        b.const(np.float32(0.1)),
        b.const(np.int8(0)),
    )  # int8 output
    b.output(y, "y")
    with pytest.raises(Exception, match="QLinearConv"):
        mnn.Session(b.build(), backend="x86", fallback=False)


# -- the u8 x s8 VNNI GEMM, the int16-pair GEMM it replaces on avx512, depthwise, Q/DQ, uint8 MaxPool --------

MORE_CASES = [  # odd sizes: K not a multiple of 4, rows not of 8, columns not of 32
    (1, 5, 11, 13, 9, 3, 1, 1, 1, 1, True, True),
    (2, 7, 17, 9, 19, 1, 1, 1, 0, 1, True, True),  # 1x1: the input planes are the im2col rows
    (1, 13, 15, 15, 33, 3, 1, 2, 1, 1, True, False),
    (1, 3, 31, 29, 16, 7, 1, 2, 3, 1, True, True),  # a ResNet-like stem
    (1, 4, 9, 10, 8, 3, 1, 3, 2, 2, False, True),  # stride 3, dilation 2
    (2, 24, 12, 12, 12, 1, 2, 1, 0, 1, True, True),  # groups on the GEMM path
]
DW_CASES = [  # depthwise: group == C == O
    (1, 7, 13, 11, 7, 3, 7, 1, 1, 1, True, True),
    (2, 5, 15, 17, 5, 3, 5, 2, 1, 1, True, True),
    (1, 3, 7, 7, 3, 5, 3, 1, 2, 1, False, False),
    (1, 9, 23, 19, 9, 3, 9, 2, 0, 1, True, True),
    (1, 4, 12, 12, 4, 3, 4, 3, 1, 2, True, True),
    (1, 2, 6, 41, 2, 3, 2, 1, 1, 1, True, True),  # a row longer than one vector, odd tail
]


def _check(graph, x, isa):
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    session = mnn.Session(graph, backend="x86", fallback=False, options={"x86.isa": isa})
    assert session.plan.backends() == {"x86": 1}
    got = session.run({"x": x})["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vnni", [True, False], ids=["vnni", "pairs"])
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("case", MORE_CASES + DW_CASES, ids=[str(c[:10]) for c in MORE_CASES + DW_CASES])
def test_qlinearconv_paths_bit_exact(isa, case, vnni, monkeypatch):
    from mnn_x86 import _x86, ops_int8

    if vnni and not _x86.int8_vnni(isa):
        pytest.skip(f"no AVX-512 VNNI on {isa} here")
    monkeypatch.setattr(ops_int8, "USE_VNNI", vnni)
    rng = np.random.default_rng(sum(case[:7]) + 1)
    for ties in (False, True):
        _check(_graph(rng, *case, mult_half=ties), rng.integers(0, 256, case[:4]).astype(np.uint8), isa)


PX_CASES = [  # small planes, many channels: conv_px (output channels in the lanes) on VNNI CPUs
    (1, 20, 5, 5, 70, 3, 1, 1, 1, 1, True, True),
    (1, 16, 4, 4, 64, 3, 1, 1, 1, 1, True, False),
    (2, 12, 7, 7, 64, 3, 1, 2, 1, 1, True, True),
    (1, 7, 3, 5, 64, 1, 1, 1, 0, 1, False, True),
]
WIDE_CASES = PX_CASES + [  # planes wider than a 64-byte vector, stride 2 with 4 phase planes, 5 taps per kernel row
    (1, 6, 9, 70, 10, 3, 1, 1, 1, 1, True, True),
    (1, 5, 10, 131, 5, 5, 5, 2, 2, 1, True, True),
    (1, 4, 66, 67, 4, 3, 4, 1, 1, 1, True, True),
    (1, 300, 1, 1, 70, 1, 1, 1, 0, 1, True, True),  # fully connected: a row block past 64 outputs
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", WIDE_CASES + MORE_CASES[:2] + DW_CASES[:2], ids=lambda c: str(c[:10]))
def test_qlinearconv_wide_planes_and_threads(case, threads):
    isa = "avx512" if "avx512" in ISAS else ISAS[0]
    rng = np.random.default_rng(sum(case[:7]) + threads)
    graph = _graph(rng, *case)
    x = rng.integers(0, 256, case[:4]).astype(np.uint8)
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    session = mnn.Session(graph, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa})
    np.testing.assert_array_equal(session.run({"x": x})["y"], want)


PLANE_CASES = [  # the VNNI convolution's planes: one per kernel column (shifted) or the stride's column phases
    (1, 13, 15, 17, 24, 3, 1, 1, 1, 1, True, True),  # rows in one vector (stride 1), channels not a multiple of 4
    (1, 13, 15, 17, 24, 3, 1, 2, 1, 1, True, True),  # rows in one vector, stride 2 (even | odd split)
    (1, 6, 9, 70, 10, 3, 1, 1, 1, 1, True, True),  # rows wider than a vector, stride 1
    (1, 6, 9, 70, 10, 3, 1, 2, 1, 1, True, False),  # rows wider than a vector, stride 2 (both phases per pass)
    (1, 6, 19, 23, 17, 3, 1, 3, 1, 1, True, True),  # stride 3
    (1, 5, 11, 9, 9, 5, 1, 1, 2, 2, False, True),  # dilation 2
    (1, 3, 31, 29, 16, 7, 1, 2, 3, 1, True, True),  # a stem: 3 channels, 7x7, stride 2
    (1, 20, 14, 14, 12, 3, 1, 1, 1, 1, True, True),  # 196 outputs: the last tile 4 wide (16-wide pass)
    (2, 9, 9, 9, 11, 3, 1, 1, 0, 1, True, True),  # 49 outputs: the last tile 17 wide (32-wide pass), batch 2
    (1, 8, 9, 9, 40, 3, 2, 1, 1, 1, True, True),  # groups
    (2, 7, 12, 13, 11, 1, 1, 2, 0, 1, True, True),  # 1x1, stride 2
    (1, 36, 7, 7, 130, 3, 1, 1, 1, 1, True, True),  # 49 pixels, 130 channels, 9 channel quads
    (1, 6, 8, 8, 70, 3, 1, 2, 1, 1, True, False),  # 16 outputs
    (1, 20, 5, 5, 70, 3, 1, 1, 1, 1, True, True),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("px", [0, 1], ids=["conv_c4", "conv_px"])
@pytest.mark.parametrize("shifted", [1, 0], ids=["per_column", "phases"])
@pytest.mark.parametrize("case", PLANE_CASES, ids=lambda c: str(c[:10]))
def test_vnni_conv_planes_bit_exact(case, shifted, px, threads, monkeypatch):
    """conv_c4 and conv_px (pixels or output channels in the lanes; group 1) on either plane layout
    (ops_int8.SHIFTED / PX force them), bit-exact to the reference."""
    from mnn_x86 import _x86, ops_int8

    if "avx512" not in ISAS or not _x86.int8_vnni("avx512"):
        pytest.skip("no AVX-512 VNNI here")
    monkeypatch.setattr(ops_int8, "SHIFTED", shifted)
    monkeypatch.setattr(ops_int8, "PX", px)
    rng = np.random.default_rng(sum(case[:8]) + shifted)
    for ties in (False, True):
        graph = _graph(rng, *case, mult_half=ties)
        x = rng.integers(0, 256, case[:4]).astype(np.uint8)
        want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
        session = mnn.Session(graph, backend="x86", fallback=False, threads=threads, options={"x86.isa": "avx512"})
        np.testing.assert_array_equal(session.run({"x": x})["y"], want)


def test_vnni_path_is_taken_where_the_cpu_has_it():
    """The u8 x s8 GEMM exactly where cpuid has AVX-512 VNNI, and never on the avx2/scalar tables."""
    from mnn_x86 import _x86

    flags = open("/proc/cpuinfo").read().split() if os.path.exists("/proc/cpuinfo") else []
    if "avx512" in ISAS:
        assert _x86.int8_vnni("avx512") == ("avx512_vnni" in flags)
    for isa in ("avx2", "scalar"):
        if isa in ISAS:
            assert _x86.int8_vnni(isa) is False


def _qdq_graph(op, shape, scale, zp):
    b = GraphBuilder("qdq")
    x = b.input("x", shape, "float32" if op == "QuantizeLinear" else "uint8")
    y = getattr(b, op)(x, b.const(np.float32(scale)), b.const(np.uint8(zp)))
    b.output(y, "y")
    return b.build()


@pytest.mark.parametrize("isa", ISAS)
def test_quantize_dequantize_bit_exact(isa):
    rng = np.random.default_rng(5)
    for shape, scale, zp in (((3, 37), 0.0173, 131), ((2, 5, 7, 9), 0.5, 0), ((1, 1000), 1.0, 255)):
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        x.flat[:8] = [0.5 * scale, 1.5 * scale, 2.5 * scale, -0.5 * scale, -1.5 * scale, 1e30, -1e30, 0.0]  # ties
        _check(_qdq_graph("QuantizeLinear", shape, scale, zp), x, isa)
        _check(_qdq_graph("DequantizeLinear", shape, scale, zp), rng.integers(0, 256, shape).astype(np.uint8), isa)


@pytest.mark.parametrize("vnni", [True, False], ids=["vnni", "plain"])
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("k, s, p, ceil", [(3, 2, 1, 0), (2, 2, 0, 0), (3, 1, 1, 0), (3, 2, 0, 1), (5, 3, 2, 1)])
def test_maxpool_uint8_bit_exact(isa, k, s, p, ceil, vnni, monkeypatch):
    from mnn_x86 import ops_int8

    monkeypatch.setattr(ops_int8, "USE_VNNI", vnni)
    rng = np.random.default_rng(k + s + p)
    b = GraphBuilder("pool")
    x = b.input("x", (2, 3, 13, 11), "uint8")
    b.output(b.MaxPool(x, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, ceil_mode=ceil), "y")
    _check(b.build(), rng.integers(0, 256, (2, 3, 13, 11)).astype(np.uint8), isa)


@pytest.mark.parametrize("isa", ISAS)
def test_quantized_model_runs_int8_end_to_end_bit_exact(isa):
    """A PTQ'd net with depthwise, residual Add and pooling: every op on x86, the same bits as the reference."""
    from mnn_core import express, nn, quant

    express.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
        nn.Conv2d(8, 8, 3, padding=1, groups=8),
        nn.ReLU(),
        nn.Conv2d(8, 12, 1),
        nn.Flatten(),
        nn.Linear(12 * 5 * 5, 10),
    )
    graph = model.to_graph([(1, 3, 19, 19)])
    rng = np.random.default_rng(0)
    res = quant.quantize(graph, {"input": rng.random((4, 3, 19, 19)).astype(np.float32)}, progress=False)
    x = rng.random((1, 3, 19, 19)).astype(np.float32)
    want = mnn.Session(res.graph, backend="reference").run({"input": x})
    session = mnn.Session(res.graph, backend="x86", fallback=False, options={"x86.isa": isa})
    got = session.run({"input": x})
    assert set(session.plan.backends()) == {"x86"}
    ops = {n.op for n in res.graph.nodes}
    assert {"QLinearConv", "QuantizeLinear", "DequantizeLinear", "MaxPool"} <= ops
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])

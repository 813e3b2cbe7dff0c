"""Winograd F(2x2, 3x3) on the fp32 path (csrc/winograd.c) and the fp16 path (csrc/winograd_fp16.c):
Session(backend="arm") runs 3x3 stride-1 convolutions through it (by the auto rule, or forced with
option "arm.winograd") and matches the reference backend within 1e-4 relative (fp16: 1e-2); the
option's off setting and the cases it does not apply to (stride 2, grouped) keep im2col + GEMM."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core import GraphBuilder, Session
from mnn_core.backend import PrepareContext

RTOL = 1e-4


def _conv_graph(c, h, w, o, pad, stride=1, group=1, relu=True, seed=0):
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((o, c // group, 3, 3)).astype(np.float32) * 0.3
    bias = rng.standard_normal(o).astype(np.float32)
    g = GraphBuilder("conv3x3")
    y = g.Conv(
        g.input("x", (1, c, h, w), "float32"),
        g.const(weight),
        g.const(bias),
        pads=[pad] * 4,
        strides=[stride, stride],
        group=group,
    )
    if relu:
        y = g.Relu(y)
    g.output(y, "y")
    return g.build(), rng.standard_normal((1, c, h, w)).astype(np.float32)


def _execution_name(graph, options=None, precision="normal") -> str:
    """The name of the execution mnn-arm prepares for the graph's Conv (it says which kernel)."""
    from mnn_arm._common import KERNELS

    infos = graph.infer()
    node = next(n for n in graph.nodes if n.op == "Conv")
    ins = [infos[name] for name in node.inputs]
    outs = [infos[name] for name in node.outputs]
    ctx = PrepareContext(precision=precision, options=dict(options or {}))
    return KERNELS["Conv"].impl(node, ins, outs, graph.initializers, ctx).name


def _check(graph, x, options=None):
    want = Session(graph, backend="reference").run({"x": x})["y"]
    sess = Session(graph, backend="arm", fallback=False, options=options or {})
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())
    return got


@needs_arm
@pytest.mark.parametrize(
    "c,h,w,o,pad",
    [(16, 13, 13, 24, 1), (8, 5, 7, 9, 1), (5, 5, 7, 6, 0), (12, 14, 14, 7, 1), (9, 3, 3, 4, 1)],
)
def test_auto_takes_winograd_and_matches_reference(c, h, w, o, pad):
    graph, x = _conv_graph(c, h, w, o, pad)
    assert _execution_name(graph) == "arm.Conv.winograd [fp32]"
    on = _check(graph, x)
    off = _check(graph, x, {"arm.winograd": "off"})
    # the two kernels round differently: equal bits would mean the option changed nothing
    assert not np.array_equal(on, off)


@needs_arm
@pytest.mark.parametrize("c,h,w,o,pad", [(3, 1, 1, 5, 1), (2, 4, 6, 3, 0), (7, 2, 2, 7, 1)])
def test_forced_on_below_the_auto_rule(c, h, w, o, pad):
    """1x1 and 2x2 output planes, 2-3 channels: auto keeps im2col, "on" takes Winograd, both correct."""
    graph, x = _conv_graph(c, h, w, o, pad, relu=False)
    assert _execution_name(graph) == "arm.Conv.gemm [fp32]"
    assert _execution_name(graph, {"arm.winograd": "on"}) == "arm.Conv.winograd [fp32]"
    _check(graph, x, {"arm.winograd": "on"})


@needs_arm
def test_environment_variable_and_bad_value(monkeypatch):
    from mnn_core.errors import BackendError

    graph, _ = _conv_graph(8, 9, 9, 8, 1)
    monkeypatch.setenv("MNN_ARM_WINOGRAD", "0")
    assert _execution_name(graph) == "arm.Conv.gemm [fp32]"
    assert _execution_name(graph, {"arm.winograd": "auto"}) == "arm.Conv.winograd [fp32]"  # the option wins
    monkeypatch.setenv("MNN_ARM_WINOGRAD", "sometimes")
    with pytest.raises(BackendError, match="arm.winograd='sometimes'; expected auto, on or off"):
        _execution_name(graph)


@needs_arm
@pytest.mark.parametrize("stride,group", [(2, 1), (1, 2)])
def test_not_applied_to_strided_or_grouped(stride, group):
    graph, x = _conv_graph(8, 11, 11, 8, 1, stride=stride, group=group)
    assert _execution_name(graph, {"arm.winograd": "on"}) == "arm.Conv.gemm [fp32]"
    _check(graph, x, {"arm.winograd": "on"})


def _check_fp16(graph, x, options=None):
    """precision="low" against the reference within the fp16 path's 1e-2 (relative to the output's magnitude)."""
    want = Session(graph, backend="reference").run({"x": x})["y"]
    sess = Session(graph, backend="arm", fallback=False, precision="low", options=options or {})
    got = sess.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2 * np.abs(want).max())
    return got


def _needs_fp16():
    from mnn_arm import paths

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")


@needs_arm
@pytest.mark.parametrize(
    "c,h,w,o,pad,relu",
    [
        (16, 13, 13, 24, 1, True),
        (8, 5, 7, 9, 1, False),
        (5, 5, 7, 6, 0, True),
        (37, 21, 19, 29, 1, False),
        (9, 3, 3, 4, 1, True),
        (64, 34, 33, 40, 1, True),
        (24, 7, 9, 16, 1, False),  # few tiles, O a multiple of 8: the GEMMs turned around
        (40, 13, 13, 48, 0, True),
    ],
)
def test_fp16_path_takes_winograd_and_matches_reference(c, h, w, o, pad, relu):
    """fp16 activations (fp16h) and fp32 activations with fp16 arithmetic ("arm.fp16_activations" off)."""
    _needs_fp16()
    graph, x = _conv_graph(c, h, w, o, pad, relu=relu, seed=c)
    assert _execution_name(graph, precision="low") == "arm.Conv.winograd [fp16h]"
    on = _check_fp16(graph, x)
    off = _check_fp16(graph, x, {"arm.winograd": "off"})
    assert not np.array_equal(on, off)
    assert _execution_name(graph, {"arm.fp16_activations": False}, precision="low") == "arm.Conv.winograd [fp16]"
    _check_fp16(graph, x, {"arm.fp16_activations": False})


@needs_arm
@pytest.mark.parametrize("c,h,w,o,pad", [(3, 1, 1, 5, 1), (2, 4, 6, 3, 0), (7, 2, 2, 7, 1)])
def test_fp16_forced_on_below_the_auto_rule(c, h, w, o, pad):
    _needs_fp16()
    graph, x = _conv_graph(c, h, w, o, pad, relu=False)
    assert _execution_name(graph, precision="low") == "arm.Conv.gemm [fp16h]"
    assert _execution_name(graph, {"arm.winograd": "on"}, precision="low") == "arm.Conv.winograd [fp16h]"
    _check_fp16(graph, x, {"arm.winograd": "on"})


@needs_arm
@pytest.mark.parametrize("c,h,w,o", [(24, 30, 29, 16), (24, 13, 13, 16)])
def test_fp16_threads_give_one_threads_bits(c, h, w, o):
    _needs_fp16()
    graph, x = _conv_graph(c, h, w, o, 1)
    one = Session(graph, backend="arm", fallback=False, precision="low").run({"x": x})["y"]
    three = Session(graph, backend="arm", fallback=False, precision="low", threads=3).run({"x": x})["y"]
    assert np.array_equal(one, three)

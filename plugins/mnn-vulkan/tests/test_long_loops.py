"""Loops whose length follows the data, just past lavapipe's loop budget (it ends an invocation's
loops after 65535 passes in all, without an error: mnn_core.backend.kit.loops): each runs to the
end against the reference (gemv.comp shares a long K among a work group, conv2d.comp splits it),
or is declined with the reason."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn
from mnn_core.errors import UnsupportedOpError
from mnn_core.testing import long_loops
from mnn_core.testing.long_loops import LONG

pytestmark = needs_vulkan
_rand = long_loops.rand


def _compare(graph, feeds, rtol=1e-3, atol=1e-2):
    long_loops.compare("vulkan", graph, feeds, rtol, atol)


def _budget_or_skip():
    from mnn_vulkan.kernels.loops import loop_budget

    long_loops.skip_without_budget(loop_budget, "device")


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((1, LONG), (LONG, 2)),
        ((3, LONG), (LONG, 1)),
        ((9, LONG), (LONG, 2)),
        ((2, 8, 40001), (40001, 3)),
        ((5,), (5, 4)),
    ],
)
def test_matmul_with_a_long_k_matches_reference(a_shape, b_shape):
    _compare(*long_loops.matmul(a_shape, b_shape))


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_with_a_long_k_matches_reference(trans_a, trans_b):
    _compare(*long_loops.gemm(trans_a, trans_b))


def test_a_batched_matmul_of_many_rows_past_the_budget_is_declined_and_falls_back():
    _budget_or_skip()
    b = mnn.GraphBuilder("tall_long_matmul")
    a, w = b.input("a", (2, 9, LONG)), b.input("b", (LONG, 2))
    b.output(b.MatMul(a, w), "y")
    graph = b.build()
    with pytest.raises(UnsupportedOpError, match=r"MatMul of 9 rows over K=70001 takes \d+ loop passes"):
        mnn.Session(graph, backend="vulkan", fallback=False)
    feeds = {"a": _rand((2, 9, LONG), 6), "b": _rand((LONG, 2), 7)}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    np.testing.assert_allclose(mnn.Session(graph, backend="vulkan").run(feeds)["y"], want, rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("channels, k", [(70001, 1), (8000, 3)])
def test_a_conv_over_a_long_k_is_split_and_matches_reference(channels, k):
    b = mnn.GraphBuilder("deep_conv")
    x = b.input("x", (1, channels, 3, 3))
    b.output(b.Conv(x, b.input("w", (2, channels, k, k)), pads=[k // 2] * 4), "y")
    feeds = {"x": _rand((1, channels, 3, 3), 8), "w": _rand((2, channels, k, k), 9)}
    feeds["x"][:, -1] = 100.0
    _compare(b.build(), feeds, atol=0.05)


def test_a_deconv_past_the_budget_is_declined():
    _budget_or_skip()
    b = mnn.GraphBuilder("deep_deconv")
    b.output(b.ConvTranspose(b.input("x", (1, LONG, 1, 1)), b.input("w", (LONG, 1, 1, 1))), "y")
    with pytest.raises(UnsupportedOpError, match="ConvTranspose over K=70001"):
        mnn.Session(b.build(), backend="vulkan", fallback=False)


def test_a_pooling_window_past_the_budget_is_declined():
    _budget_or_skip()
    with pytest.raises(UnsupportedOpError, match="this MaxPool takes"):
        mnn.Session(long_loops.wide_pool(), backend="vulkan", fallback=False)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_over_a_long_axis_matches_reference(op):
    _compare(*long_loops.softmax(op, (2, LONG), 1), atol=1e-5)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_argmax_over_a_long_axis_matches_reference(op):
    b = mnn.GraphBuilder("long_arg")
    b.output(getattr(b, op)(b.input("x", (2, LONG)), axis=1), "y")
    xv = _rand((2, LONG), 11)
    xv[:, -3] = 9.0 if op == "ArgMax" else -9.0
    _compare(b.build(), {"x": xv}, rtol=0, atol=0)


def test_reduce_sum_over_a_long_axis_matches_reference():
    b = mnn.GraphBuilder("long_reduce")
    b.output(b.ReduceSum(b.input("x", (3, LONG)), axes=[1], keepdims=0), "y")
    _compare(b.build(), {"x": _rand((3, LONG), 12)})


def test_a_recurrent_step_past_the_budget_is_declined():
    _budget_or_skip()
    b = mnn.GraphBuilder("wide_rnn")
    x = b.input("x", (1, 1, LONG))
    w, r = b.input("w", (1, 2, LONG)), b.input("r", (1, 2, 2))
    b.output(b.RNN(x, w, r, hidden_size=2), "y")
    with pytest.raises(UnsupportedOpError, match="this RNN takes"):
        mnn.Session(b.build(), backend="vulkan", fallback=False)


_PROBE = """#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Arena { uint A[]; };
layout(push_constant) uniform Push { uint first; uint second; } p;
void main() {
    uint a = 0u, b = 0u;
    for (uint i = 0u; i < p.first; ++i) a++;
    for (uint i = 0u; i < p.second; ++i) b++;
    A[0] = a; A[1] = b;
}
"""


def test_the_loop_budget_is_known_wherever_loops_are_cut_short(tmp_path):
    """Where the driver ends loops early, loop_budget() must say so; on lavapipe the count is
    one invocation's, shared by its loops (40000 + 40000 passes: the second loop is cut)."""
    from mnn_vulkan import _vulkan, device
    from mnn_vulkan.kernels.loops import loop_budget

    from mnn_core.backend.kit.spirv import find_glslc

    glslc = find_glslc()
    if glslc is None:
        pytest.skip("glslc not found")
    (tmp_path / "probe.comp").write_text(_PROBE)
    subprocess.run([glslc, str(tmp_path / "probe.comp"), "-o", str(tmp_path / "probe.spv")], check=True)
    ctx = device.choose().context
    pipe = _vulkan.Pipeline(ctx, (tmp_path / "probe.spv").read_bytes(), 1, (), "loop_probe")
    buf = _vulkan.Buffer(ctx, 8, True)
    buf.write(0, np.zeros(2, np.uint32))
    prog = _vulkan.Program(ctx)
    prog.dispatch(pipe, [(buf, 0, 8)], np.array([40000, 40000], np.uint32).tobytes(), (1, 1, 1), False)
    prog.finish()
    prog.run()
    made = np.zeros(2, np.uint32)
    buf.read(0, made)
    if tuple(made) != (40000, 40000):
        assert loop_budget() is not None and made[0] == 40000 and made[1] < 40000


def test_an_integer_product_past_the_budget_is_declined_and_falls_back():
    _budget_or_skip()
    b = mnn.GraphBuilder("long_matmul_int")
    a, w = b.input("a", (1, LONG), "uint8"), b.input("b", (LONG, 2), "uint8")
    b.output(b.MatMulInteger(a, w), "y")
    graph = b.build()
    with pytest.raises(UnsupportedOpError, match="this MatMulInteger takes"):
        mnn.Session(graph, backend="vulkan", fallback=False)
    rng = np.random.default_rng(13)
    feeds = {"a": rng.integers(0, 255, (1, LONG), np.uint8), "b": rng.integers(0, 255, (LONG, 2), np.uint8)}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    np.testing.assert_array_equal(mnn.Session(graph, backend="vulkan").run(feeds)["y"], want)

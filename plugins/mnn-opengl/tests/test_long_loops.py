"""Loops whose length follows the data, just past llvmpipe's loop budget (it ends an invocation's
loops after 65535 passes in all, without an error): each runs to the end against the reference,
shared among a work group, or is declined with the reason."""

import numpy as np
import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn
from mnn_core.errors import UnsupportedOpError
from mnn_core.testing import long_loops
from mnn_core.testing.long_loops import LONG

pytestmark = needs_opengl
_rand = long_loops.rand


def _compare(graph, feeds, rtol=1e-4, atol=1e-4):
    long_loops.compare("opengl", graph, feeds, rtol, atol)


@pytest.mark.parametrize(
    "a_shape, b_shape", [((1, LONG), (LONG, 2)), ((3, LONG), (LONG, 1)), ((2, 1, 5000), (5000, 3))]
)
def test_matmul_with_a_long_k_matches_reference(a_shape, b_shape):
    _compare(*long_loops.matmul(a_shape, b_shape), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("trans_a, trans_b", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_with_a_long_k_matches_reference(trans_a, trans_b):
    _compare(*long_loops.gemm(trans_a, trans_b), rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("shape, axis", [((2, LONG), 1), ((LONG,), 0), ((1, 4099, 3), 1), ((2, 5, 7), 2)])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_over_a_long_axis_matches_reference(op, shape, axis):
    _compare(*long_loops.softmax(op, shape, axis), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, LONG), (3, 4097), (4, 9)])
def test_layernorm_over_a_long_row_matches_reference(shape):
    b = mnn.GraphBuilder("long_layernorm")
    x = b.input("x", shape)
    scale, bias = b.input("s", shape[-1:]), b.input("b", shape[-1:])
    b.output(b.LayerNormalization(x, scale, bias, axis=-1, epsilon=1e-5), "y")
    feeds = {"x": _rand(shape, 9) + 3, "s": _rand(shape[-1:], 10), "b": _rand(shape[-1:], 11)}
    _compare(b.build(), feeds, rtol=1e-3, atol=1e-4)


def test_instancenorm_over_a_long_image_matches_reference():
    shape = (1, 2, 263, 267)
    b = mnn.GraphBuilder("long_instancenorm")
    x = b.input("x", shape)
    b.output(b.InstanceNormalization(x, b.input("s", (2,)), b.input("b", (2,)), epsilon=1e-5), "y")
    feeds = {"x": _rand(shape, 12), "s": _rand((2,), 13), "b": _rand((2,), 14)}
    _compare(b.build(), feeds, rtol=1e-3, atol=1e-4)


def _budget_or_skip():
    from mnn_opengl.kernels.loops import loop_budget

    long_loops.skip_without_budget(loop_budget, "renderer")


def test_a_conv_past_the_budget_is_declined_with_the_reason_and_falls_back():
    _budget_or_skip()
    b = mnn.GraphBuilder("deep_conv")
    x = b.input("x", (1, 8000, 3, 3))
    b.output(b.Conv(x, b.input("w", (2, 8000, 3, 3)), pads=[1, 1, 1, 1]), "y")
    graph = b.build()
    with pytest.raises(UnsupportedOpError, match="loop passes in one invocation, past llvmpipe's 65535"):
        mnn.Session(graph, backend="opengl", fallback=False)
    feeds = {"x": _rand((1, 8000, 3, 3), 15), "w": _rand((2, 8000, 3, 3), 16)}
    want = mnn.Session(graph, backend="reference").run(feeds)["y"]
    got = mnn.Session(graph, backend="opengl").run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-2)


def test_a_pooling_window_past_the_budget_is_declined():
    _budget_or_skip()
    with pytest.raises(UnsupportedOpError, match="this MaxPool takes"):
        mnn.Session(long_loops.wide_pool(), backend="opengl", fallback=False)


@pytest.mark.parametrize("shape, axis", [((2, LONG), 1), ((1, 4099, 3), 1), ((3, 5), 1)])
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("select_last", [0, 1])
def test_argmax_over_a_long_axis_matches_reference_ties_included(op, shape, axis, select_last):
    b = mnn.GraphBuilder("long_arg")
    b.output(getattr(b, op)(b.input("x", shape), axis=axis, select_last_index=select_last), "y")
    xv = np.round(_rand(shape, 19) * 2)  # few distinct values: many ties
    tied = [1, shape[axis] // 2, shape[axis] - 2]  # three tied extremes: first or last decides
    np.moveaxis(xv, axis, 0)[tied] = 9.0 if op == "ArgMax" else -9.0
    _compare(b.build(), {"x": xv}, rtol=0, atol=0)


def _loop_passes_made(dev, first: int, second: int) -> tuple[int, int]:
    """Passes two loops one after the other make in one invocation (a tiny shader)."""
    from mnn_opengl import _gl
    from mnn_opengl.shaders import HEADERS

    body = (
        "layout(local_size_x = 1) in;\n"
        "layout(std430, binding = 0) buffer Arena { uint A[]; };\n"
        "layout(std430, binding = 1) readonly buffer Params { uint P[]; };\n"
        "layout(location = 0) uniform int pbase;\n"
        "void main() {\n"
        "    uint a = 0u, b = 0u;\n"
        "    for (uint i = 0u; i < P[0]; ++i) a++;\n"
        "    for (uint i = 0u; i < P[1]; ++i) b++;\n"
        "    A[0] = a; A[1] = b;\n"
        "}\n"
    )
    prog = _gl.Program(dev.context, HEADERS[dev.props["gles"]] + body, "loop_passes")
    arena, params = _gl.Buffer(dev.context, 8), _gl.Buffer(dev.context, 8)
    arena.write(0, np.zeros(2, np.uint32))
    params.write(0, np.array([first, second], np.uint32))
    _gl.Segment(dev.context, arena, params, [(prog, 0, (1, 1, 1), False)]).run()
    out = np.zeros(2, np.uint32)
    arena.read(0, out)
    return int(out[0]), int(out[1])


def test_the_loop_budget_is_known_wherever_loops_are_cut_short():
    """Where the driver ends loops early, loop_budget() must say so; on llvmpipe the count is
    one invocation's, shared by its loops (40000 + 40000 passes: the second loop is cut)."""
    from mnn_opengl import device
    from mnn_opengl.kernels.loops import loop_budget

    made = _loop_passes_made(device.open_device(), 40000, 40000)
    if made != (40000, 40000):
        assert loop_budget() is not None and made[0] == 40000 and made[1] < 40000


@pytest.mark.parametrize("api", ["gles", "gl"])
def test_the_work_group_variants_compile(api):
    from mnn_opengl import device

    dev = device.open_device(None, api)
    variants = [("matmul", "SPLIT_K"), ("softmax", "GROUP_ROW"), ("layernorm", "GROUP_ROW"), ("argreduce", "GROUP_ROW")]
    for name, switch in variants:
        for local in (64, 256):
            assert dev.program(name, (("LOCAL_X", local), ("LOCAL_Y", 1), (switch, 1))).name > 0


@pytest.mark.parametrize("op, channels, k", [("Conv", 10749, 1), ("Conv", 3583, 3), ("ConvTranspose", 64489, 1)])
def test_a_window_at_the_edge_of_the_budget_runs_to_the_end(op, channels, k):
    """The largest channel counts the loop-pass estimate lets run on llvmpipe: the estimate must not
    undercount (the last channel decides the result)."""
    b = mnn.GraphBuilder("edge")
    x = b.input("x", (1, channels, 3, 3))
    w_shape = (1, channels, k, k) if op == "Conv" else (channels, 1, k, k)
    b.output(getattr(b, op)(x, b.input("w", w_shape), pads=[k // 2] * 4), "y")
    feeds = {"x": _rand((1, channels, 3, 3), 17), "w": _rand(w_shape, 18)}
    feeds["x"][:, -1] = 300.0
    _compare(b.build(), feeds, rtol=1e-3, atol=0.5)

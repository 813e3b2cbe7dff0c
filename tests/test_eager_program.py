"""Eager graphs as planned pieces (runtime/eager.py, body_split.py): Loop, Scan and If bodies and the
stretches between control ops run on x86 with fallback=False, checked against the reference
kernels and ONNX Runtime on random inputs; an op with no kernel, or one that only the reference
kernels run, is refused at construction, named."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import import_onnx  # noqa: E402
from mnn_core.errors import UnsupportedOpError  # noqa: E402
from mnn_core.plugins import get_plugins  # noqa: E402
from mnn_core.zoo import MODELS, FetchError, cache_dir  # noqa: E402

x86 = get_plugins().backends.get("x86")
needs_x86 = pytest.mark.skipif(x86 is None or not x86.availability(), reason="mnn-x86 is not installed or available")


def vi(name, shape, dtype=T.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name))


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def weight(rng, name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)


def check(onnx_model, feeds, rtol=1e-4, atol=1e-5):
    """x86 with fallback=False against the reference kernels and ONNX Runtime; every op of every
    planned piece on x86. Returns the x86 session."""
    graph = import_onnx(onnx_model)
    sess = mnn.Session(graph, backend="x86", fallback=False)
    assert sess.eager
    got = sess.run(feeds)
    ref = mnn.Session(graph, backend="reference").run(feeds)
    want = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, w in zip(graph.outputs, want):
        assert got[name].shape == w.shape and got[name].dtype == w.dtype, name
        np.testing.assert_allclose(got[name], ref[name], rtol=rtol, atol=atol)
        np.testing.assert_allclose(got[name], w, rtol=rtol, atol=atol)
    sessions = sess.pieces
    assert sessions
    assert {p.backend for s in sessions for p in s.plan} == {"x86"}
    return sess


def rnn_loop(rng, cond_driven: bool):
    """h = tanh(h @ W + x_i) over the rows of x (Gather at the iteration), h's sums stacked; a fixed
    trip count, or (cond_driven) no trip count and a stop once the running total passes a bound.
    MatMul before and after the Loop: the outer graph's stretches are planned too."""
    body_nodes = [
        helper.make_node("Gather", ["xs", "i"], ["row"], axis=0),
        helper.make_node("MatMul", ["h", "W"], ["hw"]),
        helper.make_node("Add", ["hw", "row"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h2"]),
        helper.make_node("ReduceSum", ["h2"], ["s"], keepdims=0),
        helper.make_node("Add", ["total", "s"], ["total2"]),
        helper.make_node("Abs", ["total2"], ["mag"]),
        const("bound", np.float32(2.5)),
        helper.make_node("Less", ["mag", "bound"], ["c2"])
        if cond_driven
        else helper.make_node("Identity", ["c"], ["c2"]),
    ]
    body = helper.make_graph(
        body_nodes,
        "body",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("h", [1, 8]), vi("total", [])],
        [vi("c2", [], T.BOOL), vi("h2", [1, 8]), vi("total2", []), vi("s", [])],
    )
    nodes = [
        helper.make_node("MatMul", ["x", "P"], ["xs"]),
        const("zero", np.float32(0)),
        const("yes", np.array(True)),
        helper.make_node("Loop", ["" if cond_driven else "n", "yes", "h0", "zero"], ["h", "total", "sums"], body=body),
        helper.make_node("MatMul", ["h", "Q"], ["y"]),
    ]
    inputs = [vi("x", [None, 8]), vi("h0", [1, 8])] + ([] if cond_driven else [vi("n", [], T.INT64)])
    outputs = [vi("y", [1, 3]), vi("total", []), vi("sums", [None])]
    return model(nodes, inputs, outputs, [weight(rng, "P", 8, 8), weight(rng, "W", 8, 8), weight(rng, "Q", 8, 3)])


@needs_x86
@pytest.mark.parametrize("steps", [0, 1, 5])
def test_a_loop_with_a_trip_count_runs_planned_on_x86(rng, steps):
    feeds = {
        "x": rng.standard_normal((7, 8)).astype(np.float32),
        "h0": rng.standard_normal((1, 8)).astype(np.float32),
        "n": np.array(steps, np.int64),
    }
    sess = check(rnn_loop(rng, cond_driven=False), feeds)
    feeds["x"] = rng.standard_normal((7, 8)).astype(np.float32)  # the same shapes again: no new plan
    before = {id(s): len(s._plans) for s in sess.pieces}
    sess.run(feeds)
    assert {id(s): len(s._plans) for s in sess.pieces} == before


@needs_x86
def test_pieces_show_where_an_eager_model_ran(rng):
    feeds = {
        "x": rng.standard_normal((7, 8)).astype(np.float32),
        "h0": rng.standard_normal((1, 8)).astype(np.float32),
        "n": np.array(3, np.int64),
    }
    sess = check(rnn_loop(rng, cond_driven=False), feeds)
    steps = [step for piece in sess.pieces for step in piece.plan]
    assert steps and {step.backend for step in steps} == {"x86"}
    io = [helper.make_tensor_value_info(n, T.FLOAT, [2, 3]) for n in ("x", "y")]
    whole = mnn.Session(import_onnx(model([helper.make_node("Relu", ["x"], ["y"])], io[:1], io[1:])))
    assert whole.pieces == []  # planned whole: its own plan says where


@needs_x86
def test_a_loop_that_stops_on_its_condition_runs_planned_on_x86(rng):
    for rows in (3, 11):
        feeds = {"x": rng.standard_normal((rows, 8)).astype(np.float32), "h0": np.zeros((1, 8), np.float32)}
        check(rnn_loop(rng, cond_driven=True), feeds)


def window_loop(rng, with_if: bool):
    """Carried state written at a step the body carries itself (a Slice at it, a ScatterElements
    whose indices a Range at it makes, as Paddle exports a decoder): the values that change every
    iteration decide shapes, so the body is cut (body_split.py); with_if, an If on the data inside
    the body (then the body is an eager program of its own, its segments cut likewise)."""
    then = helper.make_graph([helper.make_node("Mul", ["v", "two"], ["t"])], "then", [], [vi("t", [1, 1, 4])])
    other = helper.make_graph([helper.make_node("Neg", ["v"], ["e"])], "else", [], [vi("e", [1, 1, 4])])
    body_nodes = [
        const("one", np.array([1], np.int64)),
        const("two", np.float32(2)),
        helper.make_node("Add", ["step", "one"], ["next"]),
        helper.make_node("Slice", ["x", "step", "next", "one"], ["row"]),  # x[:, step:step+1]
        helper.make_node("MatMul", ["row", "W"], ["v"]),
        helper.make_node("ReduceSum", ["v"], ["vs"], keepdims=0),
        const("zero", np.float32(0)),
        helper.make_node("Greater", ["vs", "zero"], ["pos"]),
        helper.make_node("If", ["pos"], ["w"], then_branch=then, else_branch=other)
        if with_if
        else helper.make_node("Mul", ["v", "two"], ["w"]),
        helper.make_node("Squeeze", ["step"], ["s0"]),
        helper.make_node("Squeeze", ["next"], ["s1"]),
        helper.make_node("Range", ["s0", "s1", "one1"], ["idx"]),
        const("one1", np.int64(1)),
        const("ishape", np.array([1, 1, 1], np.int64)),
        helper.make_node("Reshape", ["idx", "ishape"], ["idx3"]),
        const("reps", np.array([1, 1, 4], np.int64)),
        helper.make_node("Tile", ["idx3", "reps"], ["idxt"]),
        helper.make_node("ScatterElements", ["acc", "idxt", "w"], ["acc2"], axis=1),
        helper.make_node("Identity", ["c"], ["c2"]),
    ]
    # Constants must come before their readers in ONNX: move each Constant to the front
    body_nodes.sort(key=lambda n: n.op_type != "Constant")
    body = helper.make_graph(
        body_nodes,
        "body",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("step", [1], T.INT64), vi("acc", [1, 6, 4])],
        [vi("c2", [], T.BOOL), vi("next", [1], T.INT64), vi("acc2", [1, 6, 4]), vi("w", [1, 1, 4])],
    )
    nodes = [
        const("n", np.int64(6)),
        const("yes", np.array(True)),
        const("start", np.array([0], np.int64)),
        helper.make_node("ConstantOfShape", ["accshape"], ["acc0"]),
        const("accshape", np.array([1, 6, 4], np.int64)),
        helper.make_node("Loop", ["n", "yes", "start", "acc0"], ["end", "acc", "ws"], body=body),
    ]
    nodes.sort(key=lambda n: n.op_type != "Constant")
    return model(
        nodes,
        [vi("x", [1, 6, 5])],
        [vi("acc", [1, 6, 4]), vi("ws", [6, 1, 1, 4])],
        [weight(rng, "W", 5, 4)],
    )


@needs_x86
@pytest.mark.parametrize("with_if", [False, True])
def test_a_body_whose_shapes_follow_its_step_is_cut_and_reuses_its_plans(rng, with_if):
    onnx_model = window_loop(rng, with_if)
    sess = check(onnx_model, {"x": rng.standard_normal((1, 6, 5)).astype(np.float32)})
    # the Slice at the step runs as a Gather of indices the host computes, the ScatterElements on the
    # indices it computes from the step: every segment planned once for the 6 steps, and for the next run
    sess.run({"x": rng.standard_normal((1, 6, 5)).astype(np.float32)})
    assert [len(s._plans) for s in sess.pieces] == [1] * len(sess.pieces)


@needs_x86
def test_a_scan_runs_planned_on_x86(rng):
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["s", "W"], ["sw"]),
            helper.make_node("Add", ["sw", "x"], ["s2"]),
            helper.make_node("Relu", ["s2"], ["y"]),
        ],
        "body",
        [vi("s", [1, 4]), vi("x", [1, 4])],
        [vi("s2", [1, 4]), vi("y", [1, 4])],
    )
    m = model(
        [helper.make_node("Scan", ["s0", "xs"], ["sN", "ys"], body=body, num_scan_inputs=1)],
        [vi("s0", [1, 4]), vi("xs", [None, 1, 4])],
        [vi("sN", [1, 4]), vi("ys", [None, 1, 4])],
        [weight(rng, "W", 4, 4)],
    )
    for n in (1, 9):
        check(
            m,
            {
                "s0": rng.standard_normal((1, 4)).astype(np.float32),
                "xs": rng.standard_normal((n, 1, 4)).astype(np.float32),
            },
        )


@needs_x86
def test_fallback_false_names_an_op_without_a_kernel_or_run_only_on_the_reference():
    def loop_with(op_nodes, out):
        body = helper.make_graph(
            [helper.make_node("Identity", ["c"], ["c2"])] + op_nodes,
            "body",
            [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("m", [3, 3])],
            [vi("c2", [], T.BOOL), vi("m", [3, 3]), vi(out, None)],
        )
        return import_onnx(
            model(
                [
                    const("n", np.int64(2)),
                    const("yes", np.array(True)),
                    helper.make_node("Loop", ["n", "yes", "x"], ["y", "z"], body=body),
                ],
                [vi("x", [3, 3])],
                [vi("y", [3, 3]), vi("z", None)],
            )
        )

    with pytest.raises(UnsupportedOpError, match=r"op Det .*no kernel on x86"):
        mnn.Session(loop_with([helper.make_node("Det", ["m"], ["d"])], "d"), backend="x86", fallback=False)
    with pytest.raises(UnsupportedOpError, match=r"op NonZero .*reference kernels"):
        mnn.Session(loop_with([helper.make_node("NonZero", ["m"], ["nz"])], "nz"), backend="x86", fallback=False)
    graph = loop_with([helper.make_node("Det", ["m"], ["d"])], "d")  # with fallback, Det runs on the reference
    x = np.eye(3, dtype=np.float32) * 2
    np.testing.assert_allclose(mnn.Session(graph, backend="x86").run({"x": x})["z"], [8.0, 8.0], rtol=1e-5)


SLANET = next(m for m in MODELS if m.name == "slanet-table")


@needs_x86
def test_slanet_table_runs_on_x86_without_fallback():
    """The corpus's one model with a Loop, where the corpus cache holds it (python -m mnn_core.zoo fetch)."""
    from mnn_core.zoo.fetch import fetch

    path = cache_dir() / "models" / SLANET.name / SLANET.member.rsplit("/", 1)[-1]
    if not path.exists():
        pytest.skip(f"{SLANET.name} is not in the corpus cache ({cache_dir()}): python -m mnn_core.zoo fetch")
    try:
        path = fetch(SLANET, cache_dir())[0]  # checks its sha256
    except FetchError as e:
        pytest.skip(str(e))
    feeds = SLANET.make_feeds()
    sess = mnn.Session(mnn.load(path), backend="x86", fallback=False)
    got = sess.run(feeds)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    for name, w in zip(sess.output_names, want):
        np.testing.assert_allclose(got[name], w, rtol=1e-3, atol=1e-4)
    assert {p.backend for s in sess.pieces for p in s.plan} == {"x86"}


@pytest.mark.parametrize("seed", range(12))
def test_slice_indices_take_what_the_reference_slice_takes(seed):
    """body_split's Slice-as-Gather: the host's indices (starts and ends negative, past the ends,
    steps up and down) pick what ONNX Slice does, per the reference kernel."""
    from mnn_core.ops.schema import run_reference
    from mnn_core.runtime.body_split import slice_indices

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 7, 3)).astype(np.float32)
    axes = [int(a) for a in rng.choice([0, 1, -1], size=2, replace=False)]
    starts = [int(v) for v in rng.integers(-9, 9, size=2)]
    ends = [int(v) for v in rng.integers(-9, 9, size=2)]
    steps = [int(k) for k in rng.choice([-2, -1, 1, 3], size=2)]
    want = run_reference("Slice", [x], {"starts": starts, "ends": ends, "axes": axes, "steps": steps})[0]
    idx = slice_indices([np.array(x.shape), starts, ends], {"axes": axes, "steps": steps})
    got = x
    for axis, i in zip(axes, idx):
        got = np.take(got, i, axis=axis)
    np.testing.assert_array_equal(got, want)


@needs_x86
def test_a_loop_inside_a_loop_body_runs_planned_on_x86(rng):
    """The outer body holds a Loop: it runs as an eager program of its own, whose inner body (reading
    the weight and the inner trip count from two scopes out) is planned on x86."""
    inner = helper.make_graph(
        [
            helper.make_node("MatMul", ["h", "W"], ["hw"]),
            helper.make_node("Tanh", ["hw"], ["h2"]),
            helper.make_node("Identity", ["c"], ["c2"]),
        ],
        "inner",
        [vi("j", [], T.INT64), vi("c", [], T.BOOL), vi("h", [1, 6])],
        [vi("c2", [], T.BOOL), vi("h2", [1, 6])],
    )
    outer = helper.make_graph(
        [
            helper.make_node("Loop", ["m", "yes", "g"], ["g2"], body=inner),
            helper.make_node("Add", ["g2", "x"], ["g3"]),
            helper.make_node("ReduceMax", ["g3"], ["top"], keepdims=0),
            helper.make_node("Identity", ["c"], ["c2"]),
        ],
        "outer",
        [vi("i", [], T.INT64), vi("c", [], T.BOOL), vi("g", [1, 6])],
        [vi("c2", [], T.BOOL), vi("g3", [1, 6]), vi("top", [])],
    )
    m = model(
        [const("yes", np.array(True)), helper.make_node("Loop", ["n", "yes", "x"], ["y", "tops"], body=outer)],
        [vi("x", [1, 6]), vi("n", [], T.INT64), vi("m", [], T.INT64)],
        [vi("y", [1, 6]), vi("tops", [None])],
        [weight(rng, "W", 6, 6)],
    )
    for n, inner_steps in ((3, 2), (1, 0), (4, 5)):
        feeds = {
            "x": rng.standard_normal((1, 6)).astype(np.float32),
            "n": np.array(n, np.int64),
            "m": np.array(inner_steps, np.int64),
        }
        check(m, feeds)

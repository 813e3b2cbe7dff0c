"""An If whose condition follows input values or shapes is inlined at resize: the model plans like a
static one (a plan per condition value). An If on data runs both branches and selects, where that is
safe; otherwise it keeps the graph eager."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo


def _branch(op: str, const: np.ndarray | None = None) -> Graph:
    """A branch of one op on the capture `x` (and a constant of its own, renamed when inlined)."""
    g = Graph(inputs={"x": TensorInfo(("N", 3))}, outputs=["y"])
    if const is None:
        g.nodes.append(Node(op, ["x"], ["y"], {}, "op"))
    else:
        g.initializers["k"] = const
        g.nodes.append(Node(op, ["x", "k"], ["y"], {}, "op"))
    return g


def _if_graph(cond_from: str) -> Graph:
    """y = If(cond, then: x * [1, 2, 3], else: relu(x)) with cond from an input's value, a shape or data."""
    g = Graph(name="if_" + cond_from, inputs={"x": TensorInfo(("N", 3))}, outputs=["y"])
    g.initializers["two"] = np.array(2, np.int64)
    if cond_from == "value":
        g.inputs["rate"] = TensorInfo((), "int64")
        g.initializers["fast"] = np.array(16000, np.int64)
        g.nodes.append(Node("Equal", ["rate", "fast"], ["cond"], {}, "eq"))
    elif cond_from == "shape":
        g.initializers["zero"] = np.array([0], np.int64)
        g.nodes += [
            Node("Shape", ["x"], ["shape"], {}, "shape"),
            Node("Gather", ["shape", "zero"], ["n"], {}, "n"),
            Node("Greater", ["n", "two"], ["cond1"], {}, "gt"),
            Node("Squeeze", ["cond1"], ["cond"], {}, "sq"),
        ]
    else:
        g.nodes += [
            Node("ReduceSum", ["x"], ["s"], {"keepdims": 0}, "sum"),
            Node("Greater", ["s", "zero_f"], ["cond"], {}, "gt"),
        ]
        g.initializers["zero_f"] = np.array(0, np.float32)
    then = _branch("Mul", np.array([1, 2, 3], np.float32))
    other = _branch("Relu")
    g.nodes.append(Node("If", ["cond", "x"], ["y"], {"then_branch": then, "else_branch": other}, "choose"))
    return g


@pytest.mark.parametrize("backend", ["reference", "x86"])
def test_if_on_an_input_value_plans_per_value(backend):
    from mnn_core.backend.plugins import get_plugins

    if backend not in get_plugins().backends:
        pytest.skip(f"backend {backend} is not installed")
    graph = _if_graph("value")
    sess = mnn.Session(graph, backend=backend, fallback=False)
    assert not sess.eager and sess.value_inputs == ["rate"]
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for rate in (16000, 8000, 16000):
        feeds = {"x": x, "rate": np.array(rate, np.int64)}
        got = sess.run(feeds)["y"]
        np.testing.assert_array_equal(got, evaluate(graph, feeds)["y"])
        assert all(p.op != "If" for p in sess.plan)
        assert {p.op for p in sess.plan} >= ({"Mul"} if rate == 16000 else {"Relu"})


def test_if_on_a_shape_follows_the_batch():
    graph = _if_graph("shape")
    sess = mnn.Session(graph, backend="reference")
    assert not sess.eager and sess.value_inputs == []
    for n in (1, 5, 2):
        x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_array_equal(sess.run({"x": x})["y"], evaluate(graph, {"x": x})["y"])


def test_if_on_data_runs_both_branches_and_selects():
    graph = _if_graph("data")
    sess = mnn.Session(graph, backend="reference")
    assert not sess.eager
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(sess.run({"x": x})["y"], x * np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(sess.run({"x": -x})["y"], np.zeros((2, 3), np.float32))
    assert "Where" in [p.op for p in sess.plan] and "If" not in [p.op for p in sess.plan]


def test_if_on_data_stays_eager_where_a_branch_could_fail_or_shapes_differ():
    gather = _if_graph("data")
    then = gather.nodes[-1].attrs["then_branch"]
    then.initializers["k"] = np.array([0, 1, 2], np.int64)
    then.nodes[0] = Node("Gather", ["x", "k"], ["y"], {"axis": 1}, "op")  # an index that may not fit
    assert mnn.Session(gather, backend="reference").eager
    shapes = _if_graph("data")
    shapes.nodes[-1].attrs["else_branch"].nodes[0] = Node("ReduceSum", ["x"], ["y"], {"keepdims": 1}, "op")
    sess = mnn.Session(shapes, backend="reference")
    assert sess.eager
    np.testing.assert_array_equal(sess.run({"x": -np.ones((2, 3), np.float32)})["y"], [[-6]])


def test_inlined_branches_are_optimized_like_the_graph():
    """The core passes run on the branches too: a Conv and the Relu after it plan as one Conv."""
    rng = np.random.default_rng(3)
    then = Graph(inputs={"x": TensorInfo((1, 2, 5, 5))}, outputs=["y"])
    then.initializers["w"] = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    then.nodes += [
        Node("Conv", ["x", "w"], ["c"], {"pads": [1, 1, 1, 1]}, "conv"),
        Node("Relu", ["c"], ["y"], {}, "relu"),
    ]
    other = Graph(
        inputs={"x": TensorInfo((1, 2, 5, 5))},
        outputs=["y"],
        nodes=[Node("Concat", ["x", "x"], ["y"], {"axis": 1}, "cat")],
    )
    g = Graph(name="if_conv", inputs={"x": TensorInfo((1, 2, 5, 5)), "flag": TensorInfo((), "bool")}, outputs=["y"])
    g.nodes.append(Node("If", ["flag", "x"], ["y"], {"then_branch": then, "else_branch": other}, "choose"))
    sess = mnn.Session(g, backend="reference")
    feeds = {"x": rng.standard_normal((1, 2, 5, 5)).astype(np.float32), "flag": np.array(True)}
    np.testing.assert_allclose(sess.run(feeds)["y"], evaluate(g, feeds)["y"], rtol=1e-5, atol=1e-6)
    assert [p.op for p in sess.plan] == ["Conv"]


def _two_op_branches(graph: Graph) -> Graph:
    """graph's If with two ops a branch: then x * [1, 2, 3] + 1, else -relu(x)."""
    then = _branch("Mul", np.array([1, 2, 3], np.float32))
    then.nodes[0].outputs = ["m"]
    then.initializers["one"] = np.array(1, np.float32)
    then.nodes.append(Node("Add", ["m", "one"], ["y"], {}, "add"))
    other = _branch("Relu")
    other.nodes[0].outputs = ["r"]
    other.nodes.append(Node("Neg", ["r"], ["y"], {}, "neg"))
    graph.nodes[-1].attrs.update(then_branch=then, else_branch=other)
    return graph


@pytest.mark.parametrize("backend", ["reference", "x86"])
def test_if_on_data_skips_the_branch_not_taken(backend):
    """Each run computes only the branch its condition picks: the other's steps do not run (0 ms in
    the profile) and the Where ignores their stale outputs, run after run with the condition flipping."""
    from mnn_core.backend.plugins import get_plugins

    if backend not in get_plugins().backends:
        pytest.skip(f"backend {backend} is not installed")
    graph = _two_op_branches(_if_graph("data"))
    sess = mnn.Session(graph, backend=backend, fallback=False)
    assert not sess.eager
    rng = np.random.default_rng(5)
    for sign in (1, -1, -1, 1, -1):
        x = (sign * np.abs(rng.standard_normal((3, 3)))).astype(np.float32)
        np.testing.assert_allclose(sess.run({"x": x}, profile=True)["y"], evaluate(graph, {"x": x})["y"], rtol=1e-6)
        times = dict(sess.profile())
        taken, skipped = ("then", "else") if sign > 0 else ("else", "then")
        assert all(ms == 0 for name, ms in times.items() if f"choose/{skipped}/" in name)
        assert any(ms > 0 for name, ms in times.items() if f"choose/{taken}/" in name)


def test_branch_guard_names_one_branch():
    from mnn_core.graph.inline import branch_guard

    guards = {"a/then": ["a/condition", True], "a/else": ["a/condition", False], "a/then/b/else": ["c", False]}
    assert branch_guard(guards, ["a/then/x", "a/then:y"]) == ("a/condition", True)
    assert branch_guard(guards, ["a/else/x"]) == ("a/condition", False)
    assert branch_guard(guards, ["a/then/b/else/x"]) == ("c", False)  # the innermost If's branch
    assert branch_guard(guards, ["a/then/x", "a/else/y"]) is None  # two branches: no guard
    assert branch_guard(guards, ["a/then/x", "z"]) is None  # a value outside: no guard
    assert branch_guard(guards, ["a/thenx"]) is None
    assert branch_guard({}, ["a/then/x"]) is None

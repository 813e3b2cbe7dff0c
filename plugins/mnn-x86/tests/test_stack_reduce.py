"""The pass that turns a reduction over a freshly stacked axis into binary ops on the stacked tensors
(stack_reduce.py): Unsqueeze(., [k]) of each, Concat(axis=k), Reduce{Max,Min,Sum,Mean}(axes=[k]);
outputs equal to the reference backend's on the graph as written; left alone otherwise. Odd sizes."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86.stack_reduce import fold_stack_reduce

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

SHAPE = (3, 7, 5)
FOLDS = {"ReduceMax": ["Max"], "ReduceMin": ["Min"], "ReduceSum": ["Add"], "ReduceMean": ["Add", "Div"]}


def _stack(n=3, axis=3, reduce="ReduceMax", axes=None, keepdims=0, axes_input=False, last_computed=False) -> Graph:
    g = Graph(name="stack-reduce")
    names = [f"x{i}" for i in range(n)]
    g.inputs = {v: TensorInfo(("b",) + SHAPE[1:], "float32") for v in names}
    for i, v in enumerate(names):
        if last_computed and i == n - 1:  # a stacked value that is no Unsqueeze's output
            g.nodes.append(Node("Unsqueeze", [v], ["u_pre"], {"axes": [axis]}, name=f"unsqueeze{i}"))
            g.nodes.append(Node("Neg", ["u_pre"], [f"u{i}"], {}, name="neg"))
            continue
        g.nodes.append(Node("Unsqueeze", [v], [f"u{i}"], {"axes": [axis]}, name=f"unsqueeze{i}"))
    g.nodes.append(Node("Concat", [f"u{i}" for i in range(n)], ["stack"], {"axis": axis}, name="stack"))
    axes = [axis] if axes is None else axes
    attrs = {"keepdims": keepdims, "noop_with_empty_axes": 0}
    if axes_input:
        g.initializers["axes"] = np.array(axes, np.int64)
        g.nodes.append(Node(reduce, ["stack", "axes"], ["r"], attrs, name="reduce"))
    else:
        g.nodes.append(Node(reduce, ["stack"], ["r"], {"axes": list(axes), **attrs}, name="reduce"))
    g.nodes.append(Node("Relu", ["r"], ["out"], {}, name="relu"))
    g.outputs = ["out"]
    return g


def _same_as_reference(rng, graph: Graph, batch: int, threads: int = 1) -> Session:
    feeds = {v: rng.standard_normal((batch,) + SHAPE[1:]).astype(np.float32) for v in graph.inputs}
    want = Session(graph, backend="reference", optimize=False).run(feeds)
    sess = Session(graph, backend="x86", threads=threads, fallback=False)
    got = sess.run(feeds)
    for name in want:
        assert got[name].shape == want[name].shape
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)
    return sess


@pytest.mark.parametrize("reduce", list(FOLDS))
@pytest.mark.parametrize(
    "kw",
    [dict(), dict(n=2, axis=1), dict(n=5, axis=-1), dict(keepdims=1), dict(axes_input=True), dict(axis=0, axes=[-4])],
    ids=["last", "two-middle", "five-negative", "keepdims", "axes-input", "first-negative-axes"],
)
@pytest.mark.parametrize("batch,threads", [(1, 1), (5, 2)])
def test_rewritten_matches_reference(rng, reduce, kw, batch, threads):
    graph = _stack(reduce=reduce, **kw)
    n = kw.get("n", 3)
    ops = [nd.op for nd in fold_stack_reduce(graph.copy()).nodes]
    folds = FOLDS[reduce][:1] * (n - 1) + FOLDS[reduce][1:]
    assert ops == (["Unsqueeze"] * n if kw.get("keepdims") else []) + folds + ["Relu"]
    sess = _same_as_reference(rng, graph, batch, threads)
    assert "Concat" not in [nd.op for nd in sess.graph.nodes]  # the pass ran (registered by mnn-x86)


@pytest.mark.parametrize(
    "kw",
    [dict(axes=[2]), dict(axes=[2, 3]), dict(last_computed=True), dict(reduce="ReduceProd")],
    ids=["other-axis", "two-axes", "not-an-unsqueeze", "reduce-prod"],
)
def test_left_alone(rng, kw):
    graph = _stack(**kw)
    before = [nd.op for nd in graph.nodes]
    assert [nd.op for nd in fold_stack_reduce(graph.copy()).nodes] == before
    _same_as_reference(rng, graph, 2)


def test_stack_read_twice_left_alone(rng):
    graph = _stack()
    graph.outputs.append("stack")
    before = [nd.op for nd in graph.nodes]
    assert [nd.op for nd in fold_stack_reduce(graph.copy()).nodes] == before
    _same_as_reference(rng, graph, 3)

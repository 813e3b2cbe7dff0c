"""The pass that runs a per-step dense layer on a channels-first sequence as a width-1 convolution and
transposes its narrower output instead of the input (dense_ncw.py): applied to Transpose(0, 2, 1),
[Reshape(-1, C)], MatMul by a constant of fewer columns than C, [Add of a constant row],
[Reshape(-1, T, N)]; outputs equal to the reference backend's on the graph as written; left alone
otherwise. Odd sizes throughout."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86.dense_ncw import transpose_dense

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

C, T, N = 13, 7, 3


def _chain(rng, reshape=True, bias=(N,), n=N, perm=(0, 2, 1), target=(-1, C), shape_input=False) -> Graph:
    g = Graph(name="time-distributed")
    g.inputs = {"x": TensorInfo(("b", C, T), "float32")}
    g.initializers["w"] = rng.standard_normal((C, n)).astype(np.float32)
    g.nodes.append(Node("Transpose", ["x"], ["xt"], {"perm": list(perm)}, name="transpose"))
    v = "xt"
    if reshape:
        if shape_input:
            g.initializers["s1"] = np.array(target, np.int64)
            g.nodes.append(Node("Reshape", [v, "s1"], ["r1"], {"allowzero": 0}, name="reshape1"))
        else:
            g.nodes.append(Node("Reshape", [v], ["r1"], {"shape": list(target), "allowzero": 0}, name="reshape1"))
        v = "r1"
    g.nodes.append(Node("MatMul", [v, "w"], ["mm"], {}, name="matmul"))
    v = "mm"
    if bias:
        g.initializers["bias"] = rng.standard_normal(bias).astype(np.float32)
        g.nodes.append(Node("Add", ["bias", v], ["biased"], {}, name="add"))
        v = "biased"
    if reshape:
        g.nodes.append(Node("Reshape", [v], ["y"], {"shape": [-1, T, n], "allowzero": 0}, name="reshape2"))
        v = "y"
    g.nodes.append(Node("Relu", [v], ["out"], {}, name="relu"))
    g.outputs = ["out"]
    return g


def _same_as_reference(rng, graph: Graph, batch: int, threads: int = 1) -> Session:
    x = rng.standard_normal((batch, C, T)).astype(np.float32)
    want = Session(graph, backend="reference", optimize=False).run({"x": x})
    sess = Session(graph, backend="x86", threads=threads, fallback=False)
    got = sess.run({"x": x})
    for name in want:
        assert got[name].shape == want[name].shape
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)
    return sess


CASES = {
    "reshapes-bias": dict(),
    "reshape-shape-input-row-bias": dict(shape_input=True, bias=(1, N)),
    "reshapes-no-bias": dict(bias=None),
    "3d-matmul": dict(reshape=False),
    "one-column": dict(n=1, bias=None, reshape=False),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("batch,threads", [(1, 1), (5, 2)])
def test_rewritten_matches_reference(rng, case, batch, threads):
    graph = _chain(rng, **CASES[case])
    ops = [nd.op for nd in transpose_dense(graph.copy()).nodes]
    assert ops == ["Conv", "Transpose", "Relu"]
    sess = _same_as_reference(rng, graph, batch, threads)
    assert "MatMul" not in [nd.op for nd in sess.graph.nodes]  # the pass ran (registered by mnn-x86)


@pytest.mark.parametrize(
    "kw",
    [dict(n=C, bias=(C,)), dict(perm=(1, 0, 2)), dict(target=(-1, T)), dict(target=(0, C))],
    ids=["as-wide-as-C", "other-perm", "other-reshape", "reshape-copying-a-dim"],
)
def test_left_alone(rng, kw):
    try:
        graph = _chain(rng, **kw)
    except ValueError:
        pytest.skip("not a valid graph")
    before = [nd.op for nd in graph.nodes]
    assert [nd.op for nd in transpose_dense(graph.copy()).nodes] == before
    if kw.get("target") is None and kw.get("perm") is None:
        _same_as_reference(rng, graph, 2)


def test_bias_per_step_stays_an_add(rng):
    """An Add of a (T, N) constant is no per-column bias: the chain ends at the MatMul, the Add reads
    the transposed output."""
    graph = _chain(rng, bias=(T, N), reshape=False)
    assert [nd.op for nd in transpose_dense(graph.copy()).nodes] == ["Conv", "Transpose", "Add", "Relu"]
    _same_as_reference(rng, graph, 4)


def test_intermediate_read_twice_left_alone(rng):
    graph = _chain(rng)
    graph.outputs.append("mm")
    before = [nd.op for nd in graph.nodes]
    assert [nd.op for nd in transpose_dense(graph.copy()).nodes] == before
    _same_as_reference(rng, graph, 3)

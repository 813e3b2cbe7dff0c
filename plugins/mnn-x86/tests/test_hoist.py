"""The pass that turns an unrolled loop's per-step input projections into one MatMul (hoist.py):
applied where the steps read rows 0 .. n-1 of one X through one constant W, outputs equal to the
reference backend's on the graph as written; left alone otherwise. Odd sizes throughout."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86.hoist import hoist_step_projections

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session


def _unrolled(rng, rows, seq=5, m=3, k=7, n=9, op="Gemm", squeeze=True, attrs=None, bias=True) -> Graph:
    """h_t = tanh(proj(X[t]) + h_{t-1}) over the given rows of X (seq, m, k); output the last h."""
    g = Graph(name="unrolled")
    g.inputs = {"x": TensorInfo((seq, m, k), "float32")}
    trans_b = (attrs or {}).get("transB", 0)
    g.initializers["w"] = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    if bias:
        g.initializers["c"] = rng.standard_normal(n).astype(np.float32)
    g.initializers["h0"] = np.zeros((m, n), np.float32)
    h = "h0"
    for i, t in enumerate(rows):
        idx = f"i{i}"
        g.initializers[idx] = np.array([t] if squeeze else t, np.int64)
        g.nodes.append(Node("Gather", ["x", idx], [f"g{i}"], {"axis": 0}, name=f"gather{i}"))
        a = f"g{i}"
        if squeeze:
            g.nodes.append(Node("Squeeze", [a], [f"s{i}"], {"axes": [0]}, name=f"squeeze{i}"))
            a = f"s{i}"
        if op == "Gemm":
            ins = [a, "w"] + (["c"] if bias else [])
            full = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0, **(attrs or {})}
            g.nodes.append(Node("Gemm", ins, [f"p{i}"], full, name=f"proj{i}"))
        else:
            g.nodes.append(Node("MatMul", [a, "w"], [f"p{i}"], {}, name=f"proj{i}"))
        g.nodes.append(Node("Add", [f"p{i}", h], [f"a{i}"], {}, name=f"add{i}"))
        g.nodes.append(Node("Tanh", [f"a{i}"], [f"h{i + 1}"], {}, name=f"tanh{i}"))
        h = f"h{i + 1}"
    g.outputs = [h, "p0"]
    return g


CASES = {
    "gemm-squeeze": dict(),
    "gemm-transB-alpha-beta": dict(attrs={"transB": 1, "alpha": 0.5, "beta": 2.0}),
    "gemm-scalar-index": dict(squeeze=False, attrs={"transB": 1}),
    "gemm-no-bias": dict(bias=False),
    "matmul": dict(op="MatMul", bias=False),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("threads", [1, 2])
def test_hoisted_matches_reference(rng, case, threads):
    seq, m, k, n = 5, 3, 7, 9
    rows = [4, 3, 2, 1, 0] if "alpha" in case else list(range(seq))  # a reversed direction too
    graph = _unrolled(rng, rows, seq, m, k, n, **CASES[case])
    hoisted = hoist_step_projections(graph.copy())
    ops = [nd.op for nd in hoisted.nodes]
    assert ops.count("MatMul") == 1 and "Gemm" not in ops
    x = rng.standard_normal((seq, m, k)).astype(np.float32)
    want = Session(graph, backend="reference", optimize=False).run({"x": x})
    sess = Session(graph, backend="x86", threads=threads, fallback=False)
    assert "Gemm" not in [nd.op for nd in sess.graph.nodes]  # the pass ran (registered by mnn-x86)
    got = sess.run({"x": x})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [[1, 3], [0], [0, 0, 1]])
def test_left_alone_unless_rows_0_to_n(rng, rows):
    graph = _unrolled(rng, rows)
    hoisted = hoist_step_projections(graph.copy())
    assert [nd.op for nd in hoisted.nodes] == [nd.op for nd in graph.nodes]


def test_activation_or_runtime_weight_left_alone(rng):
    graph = _unrolled(rng, list(range(5)))
    for nd in graph.nodes:
        if nd.op == "Gemm":
            nd.attrs["activation"] = "relu"
    assert "MatMul" not in [nd.op for nd in hoist_step_projections(graph.copy()).nodes]
    graph = _unrolled(rng, list(range(5)))
    graph.inputs["w"] = TensorInfo(graph.initializers.pop("w").shape, "float32")
    assert "MatMul" not in [nd.op for nd in hoist_step_projections(graph.copy()).nodes]

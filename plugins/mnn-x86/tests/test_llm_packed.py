"""The plans of one session (a decoder's prefill chunk and its single token) share one packed copy of
each constant MatMul weight (_x86._packed_cache), and both still compute the product."""

from __future__ import annotations

import numpy as np
from mnn_x86 import _x86

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session


def _matmul_entries() -> int:
    return sum(1 for key in list(_x86._packed_cache.keys()) if key[1] == "matmul")


def test_two_plans_pack_a_weight_once():
    rng = np.random.default_rng(3)
    k, n = 77, 203
    w = rng.standard_normal((k, n)).astype(np.float32)
    graph = Graph(name="proj")
    graph.inputs["x"] = TensorInfo(("S", k), "float32")
    graph.initializers["w"] = w
    graph.nodes.append(Node("MatMul", ["x", "w"], ["y"], {}, "mm"))
    graph.outputs = ["y"]
    before = _matmul_entries()
    sess = Session(graph, backend="x86", fallback=False, release_weights=False)
    for rows in (1, 33, 1):
        x = rng.standard_normal((rows, k)).astype(np.float32)
        np.testing.assert_allclose(sess.run({"x": x})["y"], x @ w, rtol=1e-4, atol=1e-4)
    assert _matmul_entries() == before + 1

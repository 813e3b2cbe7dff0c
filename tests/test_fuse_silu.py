"""x * Sigmoid(x), the exporters' SiLU, becomes one Silu and then part of the Conv before it."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo


def _conv_silu(order: str, sigmoid_read_twice: bool = False) -> Graph:
    rng = np.random.default_rng(0)
    g = Graph(name="silu", inputs={"x": TensorInfo((1, 3, 6, 6))}, outputs=["y"])
    g.initializers["w"] = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    mul_inputs = ["c", "s"] if order == "x_first" else ["s", "c"]
    g.nodes += [
        Node("Conv", ["x", "w"], ["c"], {"pads": [1, 1, 1, 1]}, "conv"),
        Node("Sigmoid", ["c"], ["s"], {}, "sigmoid"),
        Node("Mul", mul_inputs, ["y"], {}, "mul"),
    ]
    if sigmoid_read_twice:
        g.outputs.append("s")
    return g


@pytest.mark.parametrize("order", ["x_first", "sigmoid_first"])
def test_x_times_its_sigmoid_is_one_conv(order):
    graph = _conv_silu(order)
    sess = mnn.Session(graph, backend="reference")
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(sess.run({"x": x})["y"], evaluate(graph, {"x": x})["y"], rtol=1e-5, atol=1e-6)
    assert [p.op for p in sess.plan] == ["Conv"]
    assert sess.graph.nodes[0].attrs["activation"] == "silu"


def test_a_sigmoid_read_elsewhere_stays():
    graph = _conv_silu("x_first", sigmoid_read_twice=True)
    sess = mnn.Session(graph, backend="reference")
    assert "Silu" not in [n.op for n in sess.graph.nodes] and "Mul" in [n.op for n in sess.graph.nodes]
    x = np.random.default_rng(2).standard_normal((1, 3, 6, 6)).astype(np.float32)
    got, want = sess.run({"x": x}), evaluate(graph, {"x": x})
    for name in ("y", "s"):
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)

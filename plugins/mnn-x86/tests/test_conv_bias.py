"""The pass that folds a per-channel Add after a Conv (through a Squeeze of spatial axes) into the
Conv's bias and moves the activation after it next to the Conv (conv_bias.py): applied where the
added constant varies along the channel axis alone, outputs equal to the reference backend's on the
graph as written; left alone otherwise. Odd sizes throughout."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86.conv_bias import fold_conv_bias

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session


def _conv1d(rng, bias_shape, c=5, o=7, w=13, k=3, squeeze=True, conv_bias=False, act="Relu", swap=False) -> Graph:
    """Conv over (N, c, 1, w) with a (o, c, 1, k) kernel, a Squeeze of axis 2 (or none), Add of a
    constant of bias_shape, then `act` (or none); the batch symbolic."""
    g = Graph(name="conv1d")
    g.inputs = {"x": TensorInfo(("n", c, 1, w), "float32")}
    g.initializers["w"] = rng.standard_normal((o, c, 1, k)).astype(np.float32)
    g.initializers["c"] = rng.standard_normal(bias_shape).astype(np.float32)
    conv_ins = ["x", "w"]
    if conv_bias:
        g.initializers["b"] = rng.standard_normal(o).astype(np.float32)
        conv_ins.append("b")
    attrs = {"kernel_shape": [1, k], "strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1}
    g.nodes.append(Node("Conv", conv_ins, ["y"], {**attrs, "auto_pad": "NOTSET"}, name="conv"))
    v = "y"
    if squeeze:
        g.initializers["axes"] = np.array([-2], np.int64)
        g.nodes.append(Node("Squeeze", ["y", "axes"], ["s"], {}, name="squeeze"))
        v = "s"
    g.nodes.append(Node("Add", ["c", v] if swap else [v, "c"], ["a"], {}, name="add"))
    out = "a"
    if act:
        g.nodes.append(Node(act, ["a"], ["r"], {}, name="act"))
        out = "r"
    g.outputs = [out]
    return g


CASES = {
    "squeeze-bias-1c1": dict(bias_shape=(1, 7, 1)),
    "squeeze-bias-c1-swapped": dict(bias_shape=(7, 1), swap=True),
    "squeeze-scalar-bias-sigmoid": dict(bias_shape=(1,), act="Sigmoid", conv_bias=True),
    "no-squeeze-bias-1c11": dict(bias_shape=(1, 7, 1, 1), squeeze=False),
    "no-activation": dict(bias_shape=(1, 7, 1), act=None, conv_bias=True),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("batch", [1, 3])
def test_folded_matches_reference(rng, case, batch):
    graph = _conv1d(rng, **CASES[case])
    folded = fold_conv_bias(graph.copy())
    assert "Add" not in [nd.op for nd in folded.nodes]
    folded.validate()
    x = rng.standard_normal((batch, 5, 1, 13)).astype(np.float32)
    want = Session(graph, backend="reference", optimize=False).run({"x": x})
    sess = Session(graph, backend="x86", threads=2, fallback=False)
    ops = [nd.op for nd in sess.graph.nodes]
    assert "Add" not in ops  # the pass ran (registered by mnn-x86)
    if CASES[case].get("act") is None or CASES[case].get("act") == "Relu":
        assert ops.count("Relu") == 0  # fused into the Conv
    got = sess.run({"x": x})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "bias_shape,extra",
    [((1, 7, 11), {}), ((3, 7, 1), {}), ((7, 11), {}), ((1, 7, 1), {"act": None})],
    ids=["varies-along-width", "varies-along-batch", "right-aligned-width", "other-reader"],
)
def test_left_alone(rng, bias_shape, extra):
    graph = _conv1d(rng, bias_shape, **extra)
    if bias_shape == (1, 7, 1):  # the Conv's output read twice: the Add is no longer its sole reader
        graph.outputs.append("s")
    before = [nd.op for nd in graph.nodes]
    assert [nd.op for nd in fold_conv_bias(graph.copy()).nodes] == before
    x = rng.standard_normal((3, 5, 1, 13)).astype(np.float32)
    want = Session(graph, backend="reference", optimize=False).run({"x": x})
    got = Session(graph, backend="x86", fallback=False).run({"x": x})
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)

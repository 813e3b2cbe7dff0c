"""A Linear layer's constant column scale (ConvNeXt's layer scale: x @ W + b, then times gamma, a row of
N values) folded into opencl.FusedMatMul's B and bias row at resize: one launch, against the reference
backend, with and without the bias, on a batch of rows and of images, the GEMM's kernels forced too;
and what is left alone (B not a constant, gamma not a row, the product read elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = needs_opencl


def _graph(rng, x_shape, n, bias=True, gamma_shape=None, weight_input=False, then=None):
    k = x_shape[-1]
    inits = {"g": rng.uniform(0.5, 1.5, gamma_shape or (n,)).astype("float32")}
    inputs = {"x": TensorInfo(x_shape, "float32")}
    if weight_input:
        inputs["w"] = TensorInfo((k, n), "float32")
    else:
        inits["w"] = rng.uniform(-1, 1, (k, n)).astype("float32")
    nodes = [Node("MatMul", ["x", "w"], ["p"], {}, "mm")]
    last = "p"
    if bias:
        inits["b"] = rng.uniform(-1, 1, (n,)).astype("float32")
        nodes.append(Node("Add", ["p", "b"], ["s"], {}, "bias"))
        last = "s"
    nodes.append(Node("Mul", ["g", last], ["y"], {}, "scale"))
    outputs = ["y"]
    if then == "gelu":
        nodes.append(Node("Gelu", ["y"], ["z"], {}, "act"))
        outputs = ["z"]
    if then == "read-twice":
        outputs = ["y", last]
    graph = Graph(inputs=inputs, initializers=inits, nodes=nodes, outputs=outputs)
    feeds = {"x": rng.uniform(-1, 1, x_shape).astype("float32")}
    if weight_input:
        feeds["w"] = rng.uniform(-1, 1, (k, n)).astype("float32")
    return graph, feeds


def _check(graph, feeds, options=None):
    sess = Session(graph, backend="opencl", fallback=False, optimize=False, options=options or {})
    got = sess.run(feeds)
    want = Session(graph, backend="reference").run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)
    return sess, opencl_backend().segments[-1]["kernels"]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("x_shape, n", [((37, 20), 45), ((2, 5, 6, 24), 96)], ids=["rows", "images"])
@pytest.mark.parametrize(
    "options",
    [{}, {"opencl.gemm8_n96": "on"}, {"opencl.gemm8": "b64"}, {"opencl.gemm8": "n96"}],
    ids=["rule", "n96-rule", "b64", "n96"],
)
def test_layer_scale_folded_into_the_gemm(rng, bias, x_shape, n, options):
    graph, feeds = _graph(rng, x_shape, n, bias)
    sess, kernels = _check(graph, feeds, options)
    names = ["mm"] + (["bias"] if bias else []) + ["scale"]
    assert sess.plan.fused == {"+".join(names): names}
    assert len(kernels) == 1, kernels


def test_an_activation_after_the_scale_comes_along(rng):
    graph, feeds = _graph(rng, (9, 16), 12, then="gelu")
    sess, kernels = _check(graph, feeds)
    assert sess.plan.fused == {"mm+bias+scale+act": ["mm", "bias", "scale", "act"]}
    assert len(kernels) == 1, kernels


@pytest.mark.parametrize(
    "kw",
    [{"weight_input": True}, {"gamma_shape": (9, 12)}, {"then": "read-twice"}],
    ids=["b-not-constant", "gamma-not-a-row", "sum-read-twice"],
)
def test_what_is_not_folded(rng, kw):
    graph, feeds = _graph(rng, (9, 16), 12, **kw)
    sess, _ = _check(graph, feeds)
    assert not any("scale" in names for names in sess.plan.fused.values()), sess.plan.fused

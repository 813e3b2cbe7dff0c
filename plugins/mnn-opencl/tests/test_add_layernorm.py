"""opencl.AddLayerNorm (fuse.py): a residual Add and the LayerNormalization of its sum as one launch,
against the reference backend on odd sizes, and the cases it must leave alone."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo

pytestmark = needs_opencl


def _block(rng, shape, reread: str | None, bias=True, axis=-1):
    """s = x + r; y = LayerNorm(s); then per `reread`: "after" adds s to y (the next residual), "before"
    reads s in a Relu that runs ahead of the norm, "output" makes s a graph output, None: nothing else."""
    length = int(np.prod(shape[axis:]))
    param_shape = (length,) if axis == -1 else tuple(shape[axis:])
    inits = {"g": rng.uniform(0.5, 1.5, param_shape).astype("float32")}
    ln_inputs = ["s", "g"]
    if bias:
        inits["b"] = rng.uniform(-1, 1, param_shape).astype("float32")
        ln_inputs.append("b")
    nodes = [Node("Add", ["x", "r"], ["s"], {}, "add")]
    if reread == "before":
        nodes.append(Node("Relu", ["s"], ["early"], {}, "early"))
    nodes.append(Node("LayerNormalization", ln_inputs, ["y"], {"axis": axis, "epsilon": 1e-5}, "ln"))
    outputs = ["y"]
    if reread == "after":
        nodes.append(Node("Add", ["s", "y"], ["z"], {}, "next"))
        outputs = ["z"]
    elif reread == "output":
        outputs = ["y", "s"]
    elif reread == "before":
        outputs = ["y", "early"]
    return Graph(
        inputs={"x": TensorInfo(shape, "float32"), "r": TensorInfo(shape, "float32")},
        initializers=inits,
        nodes=nodes,
        outputs=outputs,
    )


@pytest.mark.parametrize(
    "shape, reread, bias, axis, fused",
    [
        ((2, 7, 37), "after", True, -1, True),  # a transformer's residual stream
        ((5, 129), None, True, -1, True),  # the sum read by the norm alone
        ((3, 11, 20), "output", False, -1, True),  # the sum a graph output, no bias
        ((2, 3, 5, 9), "after", True, -2, False),  # scale over two axes: layernorm_rows reads it flat
        ((4, 33), "before", True, -1, False),  # the sum read ahead of the norm
    ],
)
def test_add_layernorm_matches_reference(rng, shape, reread, bias, axis, fused):
    graph = _block(rng, shape, reread, bias, axis)
    feeds = {"x": rng.standard_normal(shape).astype("float32"), "r": rng.standard_normal(shape).astype("float32")}
    sess = mnn.Session(graph, backend="opencl", fallback=False, optimize=False)
    got = sess.run(feeds)
    assert sess.plan.fused == ({"add+ln": ["add", "ln"]} if fused else {})
    if fused:
        assert "add_layernorm_rows" in opencl_backend().segments[-1]["kernels"]
    want = mnn.Session(graph, backend="reference").run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5)

"""A Transpose moving the channels last and the LayerNormalization over them as one op
(opencl.TransposeLayerNorm, kernels/norm.cl's layernorm_nchw: read channels-first, stored
channels-last), against the reference backend: odd channel counts and positions not a multiple of the
32 a work-group takes, rank 3 and 4, with and without scale and bias; and what is left alone."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = needs_opencl


def _graph(rng, shape, perm, axis=-1, scale=True, bias=True, read_twice=False):
    c = shape[1]
    inits, ins = {}, ["t"]
    if scale:
        inits["g"] = rng.uniform(0.5, 1.5, (c,)).astype("float32")
        ins.append("g")
    if bias:
        inits["b"] = rng.uniform(-1, 1, (c,)).astype("float32")
        ins.append("b" if scale else "")
    nodes = [
        Node("Transpose", ["x"], ["t"], {"perm": perm}, "tr"),
        Node("LayerNormalization", ins, ["y"], {"axis": axis, "epsilon": 1e-6}, "ln"),
    ]
    graph = Graph(
        inputs={"x": TensorInfo(shape, "float32")},
        initializers=inits,
        nodes=nodes,
        outputs=["y", "t"] if read_twice else ["y"],
    )
    return graph, {"x": (rng.standard_normal(shape) * 2 + 0.5).astype("float32")}


def _check(graph, feeds):
    sess = Session(graph, backend="opencl", fallback=False, optimize=False)
    got = sess.run(feeds)
    want = Session(graph, backend="reference").run(feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)
    return sess, opencl_backend().segments[-1]["kernels"]


@pytest.mark.parametrize(
    "shape, perm",
    [
        ((2, 5, 7, 9), [0, 2, 3, 1]),
        ((3, 96, 6, 7), [0, 2, 3, 1]),
        ((1, 37, 70), [0, 2, 1]),
        ((2, 3, 1, 1), [0, 2, 3, 1]),
    ],
    ids=["odd", "convnext-like", "rank3-70-positions", "one-position"],
)
@pytest.mark.parametrize("scale, bias", [(True, True), (True, False), (False, False)], ids=["both", "scale", "none"])
def test_transpose_layernorm_matches_reference(rng, shape, perm, scale, bias):
    sess, kernels = _check(*_graph(rng, shape, perm, scale=scale, bias=bias))
    assert sess.plan.fused == {"tr+ln": ["tr", "ln"]}
    assert kernels == ["layernorm_nchw"]


@pytest.mark.parametrize(
    "kw",
    [{"perm": [0, 3, 1, 2]}, {"perm": [0, 2, 3, 1], "axis": 2}, {"perm": [0, 2, 3, 1], "read_twice": True}],
    ids=["other-perm", "norm-over-two-axes", "transpose-read-twice"],
)
def test_what_is_not_fused(rng, kw):
    perm = kw.pop("perm")
    sess, _ = _check(*_graph(rng, (2, 5, 4, 6), perm, scale=False, bias=False, **kw))
    assert "tr+ln" not in sess.plan.fused

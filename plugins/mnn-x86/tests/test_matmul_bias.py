"""A MatMul, the Add of a constant bias row and the activation after as one op (mnn_x86/ops_matmul.py,
x86.MatMulBias): bias and activation in the GEMM's epilogue. Oracle: the reference backend, node by
node, on random inputs of odd sizes too."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS

from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _linear(rng, a_shape, n, bias_shape, act=None, b_batch=()):
    """x @ w + bias [-> act], then a Neg so the output is not the fused op's (nothing is a graph output
    but the Neg's)."""
    k = a_shape[-1]
    g = Graph(name="linear")
    g.inputs["x"] = TensorInfo(a_shape, "float32")
    feeds = {"x": rng.standard_normal(a_shape).astype(np.float32)}
    g.initializers["w"] = (rng.standard_normal((*b_batch, k, n)) / np.sqrt(k)).astype(np.float32)
    g.initializers["b"] = rng.standard_normal(bias_shape).astype(np.float32)
    g.nodes.append(Node("MatMul", ["x", "w"], ["y"], {}, "mm"))
    g.nodes.append(Node("Add", ["b", "y"], ["s"], {}, "bias"))  # the bias first: either order fuses
    last = "s"
    if act:
        g.nodes.append(Node(act, ["s"], ["z"], {}, "act"))
        last = "z"
    g.nodes.append(Node("Neg", [last], ["out"], {}, "neg"))
    g.outputs = ["out"]
    return g, feeds


def _reference(g, feeds):
    return evaluate(g, feeds)[g.outputs[0]]  # node by node on the reference kernels


CASES = [  # A's shape, N, the bias's shape, activation, B's batch
    ((1, 37, 48), 96, (96,), "Gelu", ()),
    ((2, 15, 33), 7, (1, 1, 7), None, ()),
    ((5, 64), 3, (3,), "Relu", ()),
    ((3, 1, 29), 130, (1, 130), "Tanh", ()),
    ((2, 9, 17), 40, (40,), None, (2,)),
    # A's rows read in place (gemm_a_rows): K in three slices, a last partial row panel, 6 last columns
    ((2, 45, 600), 70, (70,), "Gelu", ()),
    ((3, 20, 100), 50, (50,), "Relu", (3,)),  # ... per matrix of a batch
    ((1, 31, 1024), 33, (33,), None, ()),  # rows 4 KB apart: copied per micro-panel on the 6- and 8-row tiles
    ((2, 33, 3072), 45, (45,), "Gelu", ()),  # 12 KB apart: copied on every tile, K in 12 slices (BERT's FFN down)
    ((2, 29, 1536), 40, (40,), "Gelu", ()),  # rows 6 KB apart, K in six slices (a transformer's second Linear)
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape, n, bias_shape, act, b_batch", CASES)
def test_matmul_bias_matches_reference(rng, isa, threads, a_shape, n, bias_shape, act, b_batch):
    g, feeds = _linear(rng, a_shape, n, bias_shape, act, b_batch)
    sess = Session(g, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.isa": isa})
    group = ["mm", "bias"] + (["act"] if act else [])
    assert sess.plan.fused == ({} if isa == "scalar" else {"+".join(group): group})
    want = _reference(g, feeds)
    got = sess.run(feeds)["out"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
    np.testing.assert_array_equal(sess.run(feeds)["out"], got)


def test_bias_of_more_than_one_row_is_not_fused(rng):
    g, feeds = _linear(rng, (2, 6, 8), 5, (6, 5))
    sess = Session(g, backend="x86", fallback=False, optimize=False, options={"x86.isa": "avx2"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["out"], _reference(g, feeds), rtol=1e-4, atol=2e-5)

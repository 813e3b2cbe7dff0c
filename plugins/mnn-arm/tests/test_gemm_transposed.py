"""MatMul and Gemm with a constant B on the fp32 path computed as C^T = B^T A^T when A has few rows
(ops_matmul.transposed_form: 12 tokens fill the tile's 12 columns, not a panel and a 4-row tile), the 4 x 12
tile of a panel's last 4 or fewer rows, and B's contiguous columns packed by 4x4 transposes (Gemm's
transB). Oracle: the reference backend on random inputs of odd sizes, K beyond one cache block, biases of
every broadcast, transposes, alpha / beta, a following Relu, one and two threads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core import GraphBuilder, Session
from mnn_core.backend import PrepareContext

pytestmark = needs_arm
RTOL = 1e-5


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _matmul_graph(a_shape, k, n, relu, seed):
    rng = np.random.default_rng(seed)
    g = GraphBuilder("matmul")
    y = g.MatMul(g.input("a", a_shape, "float32"), g.const(_rand(rng, k, n)))
    if relu:
        y = g.Relu(y)
    g.output(y, "y")
    return g.build(), {"a": _rand(rng, *a_shape)}


def _gemm_graph(m, k, n, bias_shape, trans_a, trans_b, alpha, beta, runtime, seed):
    """runtime: "bias" feeds C, "b" feeds B (packed at run), None keeps both constant."""
    rng = np.random.default_rng(seed)
    g = GraphBuilder("gemm")
    feeds = {"a": _rand(rng, *((k, m) if trans_a else (m, k)))}
    b = _rand(rng, *((n, k) if trans_b else (k, n)))
    ins = [g.input("a", feeds["a"].shape, "float32")]
    if runtime == "b":
        ins.append(g.input("b", b.shape, "float32"))
        feeds["b"] = b
    else:
        ins.append(g.const(b))
    if bias_shape is not None:
        c = _rand(rng, *bias_shape)
        if runtime == "bias":
            ins.append(g.input("c", bias_shape, "float32"))
            feeds["c"] = c
        else:
            ins.append(g.const(c))
    y = g.Gemm(*ins, transA=int(trans_a), transB=int(trans_b), alpha=alpha, beta=beta)
    g.output(y, "y")
    return g.build(), feeds


def _execution_name(graph, op) -> str:
    from mnn_arm._common import KERNELS

    infos = graph.infer()
    node = next(x for x in graph.nodes if x.op == op)
    ins = [infos[name] if name else None for name in node.inputs]
    outs = [infos[name] for name in node.outputs]
    return KERNELS[op].impl(node, ins, outs, graph.initializers, PrepareContext(precision="normal")).name


def _check(graph, feeds, threads):
    want = Session(graph, backend="reference").run(feeds)["y"]
    sess = Session(graph, backend="arm", fallback=False, threads=threads)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    got = sess.run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.abs(want).max())


MATMULS = [  # A's shape, K, N, relu, C^T expected
    ((12, 37), 37, 29, False, True),
    ((2, 6, 45), 45, 50, True, True),  # batch folded: M = 12
    ((1, 12, 600), 600, 31, False, True),  # two K blocks: the second accumulates
    ((9, 17), 17, 7, False, True),
    ((3, 8), 8, 10, True, True),
    ((2, 19), 19, 7, False, True),
    ((19, 23), 23, 9, False, True),
    ((36, 11), 11, 40, False, True),  # 12 + 12 + 12 columns
    ((5, 21), 21, 17, False, False),
    ((16, 9), 9, 24, False, False),
    ((9, 17), 17, 40, False, False),
    ((20, 13), 13, 30, True, False),  # the last 4 rows by the 4 x 12 tile
    ((4, 7), 7, 26, False, False),
    ((1, 2, 530), 530, 25, False, False),  # 4 x 12 tiles over two K blocks
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape, k, n, relu, transposed", MATMULS)
def test_matmul_constant_b(a_shape, k, n, relu, transposed, threads):
    graph, feeds = _matmul_graph(a_shape, k, n, relu, seed=k * 31 + n)
    assert ("C^T" in _execution_name(graph, "MatMul")) == transposed
    _check(graph, feeds, threads)


GEMMS = [  # m, k, n, bias shape, transA, transB, alpha, beta, runtime input
    (12, 33, 27, (27,), False, False, 1.0, 1.0, None),
    (12, 33, 27, (12, 27), False, True, 0.5, 2.0, None),
    (11, 40, 7, (11, 1), True, False, 1.0, -1.0, None),
    (12, 13, 50, (1,), True, True, 1.5, 0.25, None),
    (10, 29, 6, None, False, True, 1.0, 1.0, None),
    (12, 21, 14, (14,), False, False, 1.0, 1.0, "bias"),
    (12, 21, 14, (12, 14), False, True, 1.0, 0.5, "bias"),
    (7, 18, 25, (25,), False, True, 1.0, 1.0, "b"),  # B's columns contiguous: packed by transposes
    (20, 9, 13, (13,), True, True, 1.0, 1.0, "b"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m, k, n, bias_shape, trans_a, trans_b, alpha, beta, runtime", GEMMS)
def test_gemm(m, k, n, bias_shape, trans_a, trans_b, alpha, beta, runtime, threads):
    graph, feeds = _gemm_graph(m, k, n, bias_shape, trans_a, trans_b, alpha, beta, runtime, seed=m * 7 + n)
    assert ("C^T" in _execution_name(graph, "Gemm")) == (runtime != "b")
    _check(graph, feeds, threads)


def test_transposed_form_rule():
    from mnn_arm.ops_matmul import transposed_form

    assert transposed_form(12, 384, "fp32") and transposed_form(12, 1536, "fp32")
    assert not transposed_form(1, 384, "fp32")  # the matrix-vector kernel
    assert not transposed_form(16, 384, "fp32") and not transposed_form(1500, 384, "fp32")
    assert not transposed_form(20, 128, "fp32") and not transposed_form(4, 384, "fp32")  # the 4 x 12 tile
    assert not transposed_form(12, 384, "fp16h") and not transposed_form(12, 384, "fp16")

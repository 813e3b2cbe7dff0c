"""MatMul(Q, K^T), its scale, a row mask, Softmax and the MatMul by V as one op (mnn_x86/ops_attention.py,
x86.Attention; csrc/op_attention.c), with the Transposes of K and of the heads taken in where they are
the only readers. Oracle: the reference backend, node by node, on random inputs of odd sizes too."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS

from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _attention(rng, batch, m, n, d, dv, scale="Mul", mask=None, k_transpose=False, heads_back=False, split=""):
    """q [batch.., m, d] @ kT [batch.., d, n] (or Transpose(k [batch.., n, d])), scaled, masked, softmax,
    @ v [batch.., n, dv], maybe with the heads swapped back. mask: None, or the mask's shape. split: the
    operands ("q", "k", "v") given as [b, seq, heads, d] and split into heads by a Transpose."""
    g = Graph(name="attention")
    feeds = {}

    def graph_input(name, shape, scale_by=1.0):
        g.inputs[name] = TensorInfo(shape, "float32")
        feeds[name] = (rng.standard_normal(shape) * scale_by).astype(np.float32)
        return name

    def operand(name, rows, cols, scale_by=1.0, perm=(0, 2, 1, 3)):
        """[batch.., rows, cols], or a Transpose (perm) of a graph input [b, rows, heads, cols]"""
        if name[0] not in split:
            return graph_input(name, (*batch, rows, cols), scale_by)
        x = graph_input(f"{name}_seq", (batch[0], rows, batch[1], cols), scale_by)
        g.nodes.append(Node("Transpose", [x], [name], {"perm": list(perm)}, f"split_{name}"))
        return name

    q = operand("q", m, d, 0.5)
    rank = len(batch) + 2
    if k_transpose:
        k = operand("k", n, d, 0.5)
        g.nodes.append(Node("Transpose", [k], ["kt"], {"perm": [*range(rank - 2), rank - 1, rank - 2]}, "kt"))
        kt = "kt"
    elif "k" in split:  # K^T straight from [b, n, heads, d]
        kt = operand("kt", n, d, 0.5, perm=(0, 2, 3, 1))
    else:
        kt = graph_input("kt", (*batch, d, n), 0.5)
    v = operand("v", n, dv)
    g.nodes.append(Node("MatMul", [q, kt], ["s"], {}, "qk"))
    x = "s"
    if scale:
        g.initializers["c"] = np.array(0.125 if scale == "Mul" else 8.0, np.float32)
        g.nodes.append(Node(scale, [x, "c"], ["scaled"], {}, "scale"))
        x = "scaled"
    if mask is not None:
        mk = graph_input("mask", mask, 3.0)
        g.nodes.append(Node("Add", [mk, x], ["masked"], {}, "mask"))  # the mask first: either order fuses
        x = "masked"
    g.nodes.append(Node("Softmax", [x], ["p"], {"axis": -1}, "softmax"))
    g.nodes.append(Node("MatMul", ["p", v], ["o"], {}, "pv"))
    g.outputs = ["o"]
    if heads_back:
        g.nodes.append(Node("Transpose", ["o"], ["y"], {"perm": [0, 2, 1, 3]}, "heads"))
        g.outputs = ["y"]
    return g, feeds


def _reference(g, feeds):
    return evaluate(g, feeds)[g.outputs[0]]  # node by node on the reference kernels


CASES = [  # batch, m, n, d, dv, options
    ((2, 3), 13, 17, 8, 5, {}),
    ((1, 6), 197, 197, 64, 64, {"k_transpose": True, "heads_back": True}),
    ((2, 4), 29, 128, 16, 16, {"scale": "Div", "mask": (2, 1, 1, 128), "heads_back": True}),
    ((3,), 1, 7, 3, 33, {"scale": None}),
    ((2, 2), 15, 1, 5, 7, {"mask": (1,), "k_transpose": True}),
    ((1, 2), 45, 300, 33, 40, {"mask": (300,)}),
    ((2, 1, 3), 14, 31, 7, 9, {"mask": (2, 1, 1, 1, 31)}),
    ((4,), 60, 400, 8, 8, {"mask": (4, 1, 400)}),  # blocks of 28 query rows, and a last one of 4
    ((2, 5), 33, 50, 16, 24, {"k_transpose": True, "heads_back": True}),  # whole matrices on 2 threads too
    ((2, 12), 128, 128, 64, 64, {"scale": "Div", "mask": (2, 1, 1, 128), "split": "qkv", "heads_back": True}),
    ((3, 2), 23, 23, 9, 9, {"split": "qkv", "k_transpose": True}),  # K split, then transposed
    ((1, 3), 17, 40, 8, 5, {"split": "v", "mask": (40,)}),
    ((2, 3), 19, 11, 6, 6, {"split": "qk", "scale": None}),
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch, m, n, d, dv, options", CASES)
def test_fused_attention_matches_reference(rng, isa, threads, batch, m, n, d, dv, options):
    g, feeds = _attention(rng, batch, m, n, d, dv, **options)
    sess = Session(g, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa})
    fused = [name for name in sess.plan.fused if "qk" in name.split("+")]
    assert len(fused) == (0 if isa == "scalar" else 1), sess.plan.fused
    splits = {f"split_{x}" for x in ("q", "k", "kt", "v")} & {n.name for n in g.nodes}
    assert isa == "scalar" or splits <= set(fused[0].split("+")), (splits, fused)  # read in place
    want = _reference(g, feeds)
    got = sess.run(feeds)[g.outputs[0]]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-5)
    np.testing.assert_array_equal(sess.run(feeds)[g.outputs[0]], got)


def test_what_is_not_fused(rng):
    """A mask that differs between query rows, and scores another op also reads, stay unfused."""
    g, feeds = _attention(rng, (2,), 9, 11, 4, 4, mask=(9, 11))
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx2"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["o"], _reference(g, feeds), rtol=1e-4, atol=2e-5)
    g, feeds = _attention(rng, (2,), 9, 11, 4, 4)
    g.outputs.append("s")
    sess = Session(g, backend="x86", fallback=False, options={"x86.isa": "avx2"})
    assert sess.plan.fused == {}
    np.testing.assert_allclose(sess.run(feeds)["o"], _reference(g, feeds), rtol=1e-4, atol=2e-5)


def _qkv_attention(rng, b, seq, heads, d, order=(0, 1, 2), spelling="split"):
    """ViT's attention: a packed qkv projection [b, seq, 3 * heads * d] reshaped to [b, seq, 3, heads, d],
    permuted to [3, b, heads, seq, d] and split into its parts; Q, K and V are parts `order`. spelling:
    "split" (one Split, torch's legacy exporter) or "slices" (a Slice per part, its dynamo exporter)."""
    g = Graph(name="qkv")
    g.inputs["x"] = TensorInfo((b, seq, 3 * heads * d), "float32")
    feeds = {"x": (rng.standard_normal((b, seq, 3 * heads * d)) * 0.5).astype(np.float32)}
    g.initializers["shape"] = np.array([b, seq, 3, heads, d], np.int64)
    g.initializers["c"] = np.array(d**-0.5, np.float32)
    g.nodes.append(Node("Reshape", ["x", "shape"], ["r"], {}, "reshape"))
    g.nodes.append(Node("Transpose", ["r"], ["rt"], {"perm": [2, 0, 3, 1, 4]}, "permute"))
    if spelling == "split":
        g.nodes.append(Node("Split", ["rt"], ["p0", "p1", "p2"], {"axis": 0, "num_outputs": 3}, "split"))
    else:  # the core's slices_to_split makes them one Split named after the first
        for i in range(3):
            g.nodes.append(Node("Slice", ["rt"], [f"p{i}"], {"starts": [i], "ends": [i + 1], "axes": [0]}, f"slice{i}"))
    for i in range(3):
        g.nodes.append(Node("Squeeze", [f"p{i}"], [f"part{i}"], {"axes": [0]}, f"squeeze{i}"))
    q, k, v = (f"part{i}" for i in order)
    g.nodes.append(Node("Transpose", [k], ["kt"], {"perm": [0, 1, 3, 2]}, "kt"))
    g.nodes.append(Node("MatMul", [q, "kt"], ["s"], {}, "qk"))
    g.nodes.append(Node("Mul", ["s", "c"], ["scaled"], {}, "scale"))
    g.nodes.append(Node("Softmax", ["scaled"], ["p"], {"axis": -1}, "softmax"))
    g.nodes.append(Node("MatMul", ["p", v], ["o"], {}, "pv"))
    g.nodes.append(Node("Transpose", ["o"], ["y"], {"perm": [0, 2, 1, 3]}, "heads"))
    g.outputs = ["y"]
    return g, feeds


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("spelling", ["split", "slices"])
@pytest.mark.parametrize("b, seq, heads, d, order", [(2, 29, 3, 16, (0, 1, 2)), (1, 50, 2, 9, (2, 0, 1))])
def test_qkv_projection_read_in_place(rng, isa, threads, b, seq, heads, d, order, spelling):
    g, feeds = _qkv_attention(rng, b, seq, heads, d, order, spelling)
    sess = Session(g, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa})
    fused = [name for name in sess.plan.fused if "qk" in name.split("+")]
    assert len(fused) == (0 if isa == "scalar" else 1), sess.plan.fused
    taken = {"permute", "split" if spelling == "split" else "slice0/split", "squeeze0", "squeeze1", "squeeze2"}
    assert isa == "scalar" or taken <= set(fused[0].split("+")), fused  # Q, K and V read in place
    got = sess.run(feeds)["y"]
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=2e-5)

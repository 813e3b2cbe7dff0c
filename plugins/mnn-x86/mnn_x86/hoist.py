"""Graph pass: the input projections of an unrolled recurrent loop as one MatMul.

A recurrent cell exported step by step (torch's LSTMCell/GRUCell in a Python loop) projects each
step's input on its own: Gemm(Gather(X, t), W, C) for t = 0 .. T-1, T matrix-vector products that
each read all of W (captcha-crnn: 40 of them over a 6.5 MB W, read from memory each time). None of
them depends on the recurrence, so they are one product over the whole sequence,

    P = MatMul(X, W^T) + C            (T, M, N), W read once
    step t's projection = Gather(P, t)

and the Gathers copy M x N floats each. Only a group of at least two steps that take distinct rows
0 .. n-1 of the same X, through the same constant W (and C, alpha, beta, transB), is rewritten;
anything else is left as it is. The result is the same ONNX graph semantics, so the pass is sound
on every backend.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from mnn_core.graph.ir import Graph, Node
from mnn_core.graph.rewrite import NewNames


def _step_row(node: Node | None, producers: dict, graph: Graph) -> tuple[str, int, list[Node]] | None:
    """(X, t, the nodes from X to the step's input) where `node` makes X[t] of a rank-3 X: a Gather on
    axis 0 by a constant scalar, or by a constant [t] followed by Squeeze(axes=[0])."""
    chain = []
    if node is not None and node.op == "Squeeze" and node.attrs.get("axes") == [0] and len(node.inputs) == 1:
        chain.append(node)
        node = producers.get(node.inputs[0])
        want_rank = 1
    else:
        want_rank = 0
    if node is None or node.op != "Gather" or node.attrs.get("axis", 0) != 0:
        return None
    idx = graph.initializers.get(node.inputs[1])
    if idx is None or idx.ndim != want_rank or idx.size != 1 or idx.dtype.kind not in "iu":
        return None
    return node.inputs[0], int(idx.reshape(-1)[0]), [node] + chain


def _projection(node: Node, graph: Graph) -> tuple | None:
    """The group key of a step's projection (W, C, alpha, beta, transB), or None for one that is not
    a constant projection: a Gemm or a MatMul by a constant 2-D B, with no fused activation."""
    a = node.attrs
    if a.get("activation", "none") not in ("none", None):
        return None
    w = graph.initializers.get(node.inputs[1]) if len(node.inputs) > 1 else None
    if w is None or w.ndim != 2 or w.dtype != np.float32:
        return None
    if node.op == "MatMul":
        return (node.inputs[1], "", 1.0, 1.0, 0)
    if node.op != "Gemm" or a.get("transA", 0):
        return None
    c = node.inputs[2] if len(node.inputs) > 2 else ""
    if c and (c not in graph.initializers or graph.initializers[c].dtype != np.float32):
        return None
    return (node.inputs[1], c, float(a.get("alpha", 1.0)), float(a.get("beta", 1.0)), int(a.get("transB", 0)))


def hoist_step_projections(graph: Graph) -> Graph:
    producers = graph.producers()
    groups: dict[tuple, list[tuple[Node, int, list[Node]]]] = defaultdict(list)
    for node in graph.nodes:
        if node.op not in ("Gemm", "MatMul"):
            continue
        key = _projection(node, graph)
        row = _step_row(producers.get(node.inputs[0]), producers, graph) if key else None
        if row is not None:
            x, t, chain = row
            groups[(x,) + key].append((node, t, chain))
    fresh = NewNames(graph)
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    before: dict[int, list[Node]] = {}  # new nodes, by the position they go before
    replace: dict[int, list[Node]] = {}  # a step's projection -> the Gather (+ Squeeze) of its row of P

    for (x, w_name, c_name, alpha, beta, trans_b), members in groups.items():
        rows = sorted(t for _, t, _ in members)
        if len(rows) < 2 or rows != list(range(len(rows))):  # distinct rows 0 .. n-1 of X
            continue
        first = members[0][0]
        w = graph.initializers[w_name]
        wt = np.ascontiguousarray(w.T if trans_b else w, dtype=np.float32)
        if alpha != 1.0:
            wt = wt * np.float32(alpha)
        wt_name = fresh(f"{w_name}.hoisted")
        graph.initializers[wt_name] = wt
        p = fresh(f"{first.name or first.outputs[0]}.hoisted")
        new = [Node("MatMul", [x, wt_name], [p], {}, name=p)]
        if c_name:
            c = graph.initializers[c_name]
            if beta != 1.0:
                c_name = fresh(f"{c_name}.hoisted")
                graph.initializers[c_name] = (c * np.float32(beta)).astype(np.float32)
            biased = fresh(f"{p}.bias")
            new.append(Node("Add", [p, c_name], [biased], {}, name=biased))
            p = biased
        at = min(position[id(chain[0])] for _, _, chain in members)
        before.setdefault(at, []).extend(new)
        for node, _, chain in members:
            out, steps = node.outputs[0], []
            for k, old in enumerate(chain):  # the same Gather (+ Squeeze), on P
                made = out if k == len(chain) - 1 else fresh(f"{out}.row")
                src = p if k == 0 else steps[-1].outputs[0]
                steps.append(
                    Node(old.op, [src] + old.inputs[1:], [made], dict(old.attrs), name=fresh(f"{node.name}.row"))
                )
            replace[id(node)] = steps
    if not replace:
        return graph
    nodes = []
    for i, node in enumerate(graph.nodes):
        nodes.extend(before.get(i, ()))
        nodes.extend(replace.get(id(node), [node]))
    graph.nodes = nodes
    return graph

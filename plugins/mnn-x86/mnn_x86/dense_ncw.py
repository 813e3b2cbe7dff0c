"""Graph pass: a dense layer applied per time step to a channels-first sequence, done on the sequence
as it is and its narrower output transposed instead.

A TensorFlow model converted to ONNX runs Keras' TimeDistributed(Dense) after a Conv1D as

    X (B, C, T) -> Transpose(0, 2, 1) -> [Reshape(-1, C)] -> MatMul(W: C x N) -> [Add(b)] -> [Reshape(-1, T, N)]

which transposes all B x C x T floats (deepcut: 8 x 200 x 20, about 10 us each of twelve times) to
feed a layer of N = 5 outputs. When N < C the same values come from

    Conv(X, W^T as N x C x 1, b) (B, N, T) -> Transpose(0, 2, 1)

(a width-1 convolution: a GEMM on X as it is, the bias in its epilogue), which transposes B x N x T
floats. Only that exact chain is rewritten (each value read once, W and b
constant, the reshapes only merging and splitting B and T); the result has the same ONNX semantics,
so the pass is sound on every backend.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from mnn_core.graph.ir import Graph, Node
from mnn_core.graph.rewrite import NewNames, sole_reader, splice

#: a 1-D convolution of width 1: W^T applied at every step, the bias in its epilogue
_POINTWISE = {"kernel_shape": [1], "strides": [1], "pads": [0, 0], "dilations": [1], "group": 1, "auto_pad": "NOTSET"}


def _reshape_target(node: Node, graph: Graph) -> list[int] | None:
    """A Reshape's constant target shape (attribute or second input)."""
    if node.op != "Reshape":
        return None
    if len(node.inputs) > 1 and node.inputs[1]:
        shape = graph.initializers.get(node.inputs[1])
        return None if shape is None else [int(d) for d in np.asarray(shape).reshape(-1)]
    shape = node.attrs.get("shape")
    return None if shape is None else [int(d) for d in shape]


def _chain(tr: Node, graph: Graph, sole, infos) -> tuple | None:
    """(the nodes replaced, W, b or None, C, T, N) where `tr` starts the pattern, else None."""
    x = infos.get(tr.inputs[0])
    if tr.attrs.get("perm") != [0, 2, 1] or x is None or len(x.shape) != 3:
        return None
    c, t = x.shape[1], x.shape[2]
    if not isinstance(c, int) or not isinstance(t, int):
        return None
    nodes, node = [tr], sole(tr.outputs[0])
    merged = node is not None and node.op == "Reshape"
    if merged:
        if _reshape_target(node, graph) != [-1, c]:
            return None
        nodes.append(node)
        node = sole(node.outputs[0])
    if node is None or node.op != "MatMul" or node.inputs[0] != nodes[-1].outputs[0]:
        return None
    w = graph.initializers.get(node.inputs[1])
    if w is None or w.dtype != np.float32 or w.ndim != 2 or w.shape[0] != c or w.shape[1] >= c:
        return None
    if node.attrs.get("activation", "none") != "none":
        return None
    n, bias = w.shape[1], None
    nodes.append(node)
    node = sole(node.outputs[0])
    if node is not None and node.op == "Add" and len(node.inputs) == 2:
        other = node.inputs[1 - node.inputs.index(nodes[-1].outputs[0])] if nodes[-1].outputs[0] in node.inputs else ""
        b = graph.initializers.get(other)
        if b is not None and b.dtype == np.float32 and b.size == n and b.ndim in (1, 2) and b.shape[-1] == n:
            bias = b.reshape(n)
            nodes.append(node)
            node = sole(node.outputs[0])
    if merged:
        if node is None or _reshape_target(node, graph) != [-1, t, n]:
            return None
        nodes.append(node)
    return nodes, w, bias, c, t, n


def transpose_dense(graph: Graph) -> Graph:
    if not any(n.op == "Transpose" for n in graph.nodes):
        return graph
    consumers = graph.consumers()
    outputs = set(graph.outputs)
    infos = graph.infer()
    fresh = NewNames(graph)
    sole = partial(sole_reader, consumers, outputs)

    replace: dict[int, list[Node]] = {}  # the chain's last node -> the new nodes
    drop: set[int] = set()
    for tr in graph.nodes:
        found = _chain(tr, graph, sole, infos) if tr.op == "Transpose" else None
        if found is None:
            continue
        nodes, w, bias, c, t, n = found
        base = next(nd.name for nd in nodes if nd.op == "MatMul")
        wt = fresh(f"{base}.wt")
        graph.initializers[wt] = np.ascontiguousarray(w.T.reshape(n, c, 1))
        ins = [tr.inputs[0], wt]
        if bias is not None:
            ins.append(fresh(f"{base}.bias"))
            graph.initializers[ins[-1]] = np.ascontiguousarray(bias)
        y = fresh(f"{base}.ncw")
        new = [
            Node("Conv", ins, [y], dict(_POINTWISE), name=y),
            Node("Transpose", [y], list(nodes[-1].outputs), {"perm": [0, 2, 1]}, name=fresh(f"{base}.nwc")),
        ]
        drop.update(id(nd) for nd in nodes)
        replace[id(nodes[-1])] = new
    return splice(graph, replace, drop)

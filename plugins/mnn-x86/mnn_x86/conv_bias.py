"""Graph pass: a per-channel bias added after a convolution becomes the convolution's own bias.

Converters from TensorFlow (deepcut, Keras Conv1D) emit a 1-D convolution as ExpandDims, Conv2D,
Squeeze and a separate BiasAdd, often followed by Relu:

    Conv(x, W) -> [Squeeze of spatial axes] -> Add(., c) -> [activation]

with c constant and equal along every axis but the channel one. The Add is then a full pass over the
output (about 10 us for 8 x 200 x 20 floats, against nothing in the GEMM's epilogue), and the
activation after it cannot fuse into the Conv. Rewritten:

    Conv(x, W, b + c) -> [activation] -> [Squeeze]

so the core's fuse_activations pass takes the activation into the Conv. An activation is elementwise,
so it commutes with the Squeeze; the Squeeze only drops axes of size 1 after the channel axis, so the
channel axis stays axis 1. Anything else is left as it is; the result has the same ONNX semantics, so
the pass is sound on every backend.
"""

from __future__ import annotations

import numpy as np

from mnn_core.graph.ir import Graph, Node
from mnn_core.graph.rewrite import NewNames, sole_reader
from mnn_core.ops.elementwise import ACTIVATION_OPS


def _squeeze_axes(node: Node, graph: Graph, rank: int) -> list[int] | None:
    """A Squeeze's axes (normalized), from its attribute or its constant second input."""
    if len(node.inputs) > 1 and node.inputs[1]:
        axes = graph.initializers.get(node.inputs[1])
        if axes is None:
            return None
        axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    else:
        axes = node.attrs.get("axes")
        if not axes:
            return None
    return [a + rank if a < 0 else a for a in axes]


def _channel_bias(value: np.ndarray | None, rank: int, channels: int) -> np.ndarray | None:
    """`value` as a [channels] float32 vector where it broadcasts against a rank-`rank` tensor whose
    axis 1 holds the channels and varies along that axis alone, else None."""
    if value is None or value.dtype != np.float32 or value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + tuple(value.shape)
    if any(d != 1 for i, d in enumerate(shape) if i != 1) or shape[1] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(-1), (channels,)).astype(np.float32)


def fold_conv_bias(graph: Graph) -> Graph:
    consumers = graph.consumers()
    outputs = set(graph.outputs)
    infos = None
    fresh = NewNames(graph)
    for conv in list(graph.nodes):
        w = graph.initializers.get(conv.inputs[1]) if conv.op == "Conv" and len(conv.inputs) > 1 else None
        if w is None or w.dtype != np.float32 or conv.attrs.get("activation", "none") != "none":
            continue
        old_bias = conv.inputs[2] if len(conv.inputs) > 2 and conv.inputs[2] else ""
        if old_bias and old_bias not in graph.initializers:
            continue
        view = sole_reader(consumers, outputs, conv.outputs[0])
        rank = w.ndim
        if view is not None and view.op == "Squeeze":
            axes = _squeeze_axes(view, graph, rank)
            if axes is None or min(axes) < 2:
                continue
            add, rank = sole_reader(consumers, outputs, view.outputs[0]), rank - len(axes)
        else:
            add, view = view, None
        if add is None or add.op != "Add" or len(add.inputs) != 2:
            continue
        mine = (view or conv).outputs[0]
        other = add.inputs[1 - add.inputs.index(mine)] if add.inputs.count(mine) == 1 else None
        c = _channel_bias(graph.initializers.get(other), rank, w.shape[0]) if other else None
        if c is None:
            continue
        if view is not None:  # the axes it drops must be 1 in the Conv's output (its batch may be symbolic)
            infos = infos or graph.infer()
            y = infos.get(conv.outputs[0])
            if y is None or len(y.shape) != w.ndim or any(y.shape[a] != 1 for a in _squeeze_axes(view, graph, w.ndim)):
                continue
        bias = c + (graph.initializers[old_bias].astype(np.float32) if old_bias else 0)
        name = fresh(f"{conv.name or conv.outputs[0]}.bias")
        graph.initializers[name] = np.ascontiguousarray(bias, dtype=np.float32)
        conv.inputs = [conv.inputs[0], conv.inputs[1], name]
        graph.nodes.remove(add)
        if view is None:
            conv.outputs = list(add.outputs)
            consumers = graph.consumers()
            continue
        view.outputs = list(add.outputs)
        act = sole_reader(consumers, outputs, add.outputs[0])
        if act is not None and act.op in ACTIVATION_OPS and len([n for n in act.inputs if n]) == 1:
            # Conv -> act -> Squeeze: the activation next to the Conv, for fuse_activations
            act.inputs = [conv.outputs[0]]
            mid = fresh(f"{act.outputs[0]}.unsqueezed")
            view.inputs = [mid] + view.inputs[1:]
            view.outputs, act.outputs = list(act.outputs), [mid]
            graph.nodes.remove(act)
            graph.nodes.insert(graph.nodes.index(view), act)
        consumers = graph.consumers()
    return graph

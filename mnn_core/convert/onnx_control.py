"""The ONNX op table's control flow, sequences and optionals: If (a constant condition picks its
branch at import; otherwise both bodies become closed sub-graphs), Loop, Scan, SequenceMap,
SequenceEmpty, Optional. Graphs holding them run eagerly (Graph.is_dynamic)."""

from __future__ import annotations

import numpy as np

from ..graph.ir import SequenceInfo, TensorInfo
from .onnx_common import NodeUnsupported, onnx_type_name
from .onnx_ops import direct, handles


@handles("If")
def _if(ctx, node):
    cond = ctx.const(node.inputs[0])
    if cond is not None:  # a constant condition picks its branch at import
        branch = node.attrs["then_branch"] if bool(np.asarray(cond).reshape(-1)[0]) else node.attrs["else_branch"]
        return ctx.inline_graph(node, branch)
    # a runtime condition: both branches become closed sub-graphs taking the same captures
    then_g, then_caps = ctx.import_subgraph(node.attrs["then_branch"], [], f"{node.name}/then")
    else_g, else_caps = ctx.import_subgraph(node.attrs["else_branch"], [], f"{node.name}/else")
    captures = list(dict.fromkeys(then_caps + else_caps))
    branches = {"then_branch": (then_g, then_caps), "else_branch": (else_g, else_caps)}
    infos = {
        outer: info
        for g, caps in branches.values()
        for outer, info in zip(caps, list(g.inputs.values())[len(g.inputs) - len(caps) :])
    }
    attrs = {key: _take_captures(g, caps, captures, infos) for key, (g, caps) in branches.items()}
    ctx.emit("If", [node.inputs[0]] + captures, node.outputs, attrs, node.name, fold=False)


def _take_captures(graph, own: list[str], captures: list[str], infos: dict):
    """A branch whose trailing inputs are `captures` (the union of both branches'), in that order."""
    from ..graph.ir import unique_name

    formal = {n: i for n, i in list(graph.inputs.items())[: len(graph.inputs) - len(own)]}
    mine = dict(zip(own, list(graph.inputs.items())[len(graph.inputs) - len(own) :]))
    inputs = dict(formal)
    taken = set(graph.inputs) | {o for n in graph.nodes for o in n.outputs} | set(graph.initializers)
    for outer in captures:
        if outer in mine:
            name, info = mine[outer]
        else:  # read by the other branch only: an input this branch ignores
            name = unique_name(taken, f"unused.{outer}")
            taken.add(name)
            info = infos[outer]
        inputs[name] = info
    graph.inputs = inputs
    return graph


@handles("Loop")
def _loop(ctx, node):
    body = node.attrs["body"]
    carried = node.inputs[2:]
    # a carried value's info: as the body declares it (its symbols stay symbols), else the initial value's
    declared = list(body.input)[2:]
    formal = [TensorInfo((), "int64"), TensorInfo((), "bool")] + [
        ctx.declared_info(d, v) for d, v in zip(declared, carried)
    ]
    graph, captures = ctx.import_subgraph(body, formal, f"{node.name}/body")
    inputs = [node.input(0), node.input(1)] + list(carried) + captures
    ctx.emit("Loop", inputs, node.outputs, {"body": graph, "num_captures": len(captures)}, node.name, fold=False)


@handles("Scan")
def _scan(ctx, node):
    if node.opset < 9:
        raise NodeUnsupported("Scan before opset 9 (batched, with sequence_lens) is not supported")
    n_scan = node.attrs["num_scan_inputs"]
    n_state = len(node.inputs) - n_scan
    axes = list(node.attrs.get("scan_input_axes") or [0] * n_scan)
    formal = [ctx.value_info(v) for v in node.inputs[:n_state]]
    for v, axis in zip(node.inputs[n_state:], axes):
        info = ctx.value_info(v)
        shape = list(info.shape)
        del shape[axis % len(shape)]
        formal.append(TensorInfo(tuple(shape), info.dtype))
    graph, captures = ctx.import_subgraph(node.attrs["body"], formal, f"{node.name}/body")
    attrs = {k: v for k, v in node.attrs.items() if k != "body"}
    direct(
        ctx,
        node,
        inputs=list(node.inputs) + captures,
        ignore=("body",),
        values={"body": graph, "num_captures": len(captures), **attrs},
    )


@handles("SequenceMap")
def _sequence_map(ctx, node):
    formal = []
    for v in node.inputs:
        info = ctx.value_info(v)
        if isinstance(info, SequenceInfo):
            info = info.elem if info.elem is not None else None
        formal.append(info)
    graph, captures = ctx.import_subgraph(node.attrs["body"], formal, f"{node.name}/body")
    ctx.emit(
        "SequenceMap",
        list(node.inputs) + captures,
        node.outputs,
        {"body": graph, "num_captures": len(captures)},
        node.name,
        fold=False,
    )


@handles("SequenceEmpty")
def _sequence_empty(ctx, node):
    dtype = onnx_type_name(node.attrs.get("dtype", 1))
    ctx.emit("SequenceEmpty", [], node.outputs, {"dtype": dtype}, node.name, fold=False)


@handles("Optional")
def _optional(ctx, node):
    ctx.emit("Optional", node.inputs[:1] if node.input(0) else [], node.outputs, {}, node.name, fold=False)

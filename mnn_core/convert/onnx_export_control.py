"""The ONNX exporter's control flow and sequences: Loop, Scan, SequenceMap and If bodies written as
ONNX sub-graphs (an mnn body's capture inputs become reads of the enclosing values by name),
SliceDynamic, SequenceEmpty. Registered in WRITERS at the bottom.
"""

from __future__ import annotations

import numpy as np

from ..graph.ir import Graph, Node
from .onnx_export_ops import dtype_attr
from .onnx_export_writer import WRITERS, OnnxWriter, value_info


def _body(w: OnnxWriter, body: Graph, n_formal: int, outer: list[str], name: str):
    """A closed mnn body as an ONNX GraphProto: its capture inputs become reads of the outer values."""
    from onnx import numpy_helper

    infos = body.infer()
    sub = OnnxWriter(body, w.opset, infos)
    sub.taken |= w.taken
    names = list(body.inputs)
    for inner, src in zip(names[n_formal:], outer):
        if inner != src:  # ONNX bodies read enclosing values by name
            sub.emit("Identity", [src], [inner], f"{name}.capture.{inner}")
    for node in body.nodes:
        sub.node(node)
    w.taken |= sub.taken
    inputs = [value_info(w.helper, n, body.inputs[n]) for n in names[:n_formal]]
    outputs = [value_info(w.helper, n, infos[n]) for n in body.outputs]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in {**body.initializers, **sub.constants}.items()]
    return w.helper.make_graph(sub.nodes, name, inputs, outputs, inits)


def _split_captures(node: Node) -> tuple[list[str], list[str]]:
    n = node.attrs.get("num_captures", 0)
    return (
        (list(node.inputs[: len(node.inputs) - n]), list(node.inputs[len(node.inputs) - n :]))
        if n
        else (list(node.inputs), [])
    )


def _loop(w: OnnxWriter, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    w.emit("Loop", own, outputs, node.name, body=body)


def _scan(w: OnnxWriter, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    attrs = {k: v for k, v in node.attrs.items() if k not in ("body", "num_captures")}
    w.emit("Scan", own, outputs, node.name, body=body, **attrs)


def _sequence_map(w: OnnxWriter, node: Node, outputs) -> None:
    own, caps = _split_captures(node)
    body = _body(w, node.attrs["body"], len(own), caps, f"{node.name}_body")
    w.emit("SequenceMap", own, outputs, node.name, body=body)


def _if(w: OnnxWriter, node: Node, outputs) -> None:
    caps = list(node.inputs[1:])
    branches = {key: _body(w, node.attrs[key], 0, caps, f"{node.name}_{key}") for key in ("then_branch", "else_branch")}
    w.emit("If", node.inputs[:1], outputs, node.name, **branches)


def _slice_dynamic(w: OnnxWriter, node: Node, outputs) -> None:
    ins = list(node.inputs) + [""] * (5 - len(node.inputs))
    if node.attrs.get("axes"):
        ins[3] = w.const(node.attrs["axes"], f"{node.name}.axes")
    while ins and not ins[-1]:
        ins.pop()
    w.emit("Slice", ins, outputs, node.name)


WRITERS.update(
    {
        "SliceDynamic": _slice_dynamic,
        "Loop": _loop,
        "Scan": _scan,
        "If": _if,
        "SequenceMap": _sequence_map,
        "SequenceEmpty": dtype_attr("dtype"),
    }
)

"""mnn graph -> ONNX.

    proto = to_onnx(graph)                 # onnx.ModelProto, opset 17 by default
    save_onnx(graph, "model.onnx")         # large weights go to model.onnx.data

The inverse of the importer: mnn attributes that ONNX passes as tensors
(Reshape shape, Slice starts, Pad pads, Clip min/max, Resize scales, ...)
become constant inputs; fused activations on Conv/Gemm/MatMul/ConvTranspose
become separate ONNX nodes again; mnn ops ONNX lacks at the target opset are
written as small sub-graphs (Silu = x * Sigmoid(x), Gelu before opset 20).
Training-only mnn ops (gradients, optimizer updates) have no ONNX form and
give a clear error.

This module writes the model around the nodes (inputs, outputs, initializers,
opsets, metadata); the nodes are written by onnx_export_writer.py (the writer
and its table of op writers), onnx_export_ops.py (per-op forms) and
onnx_export_control.py (control flow bodies).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import MnnError
from ..graph.ir import Graph
from . import onnx_export_control, onnx_export_ops  # noqa: F401  register their writers in WRITERS
from .onnx_common import require_onnx
from .onnx_export_writer import WRITERS, OnnxWriter, value_info

__all__ = ["DEFAULT_OPSET", "EXTERNAL_DATA_BYTES", "MIN_OPSET", "WRITERS", "save_onnx", "to_onnx"]

DEFAULT_OPSET = 17
MIN_OPSET = 13
EXTERNAL_DATA_BYTES = 1 << 30  # save_onnx keeps weights in the .onnx file below this total


def to_onnx(graph: Graph, opset: int = DEFAULT_OPSET, producer: str = "mnn") -> onnx.ModelProto:  # noqa: F821
    """The mnn graph as an ONNX model of `opset` (13 or newer)."""
    onnx = require_onnx("exporting to ONNX")
    from onnx import helper, numpy_helper

    if not isinstance(opset, int) or isinstance(opset, bool):  # to_onnx(graph, "model.onnx"), say
        raise MnnError(
            f"to_onnx(graph, opset) takes an int opset, not {opset!r}; it returns the ModelProto: "
            "save_onnx(graph, path) writes a file"
        )
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise MnnError(f"to_onnx writes opsets {MIN_OPSET} to {onnx.defs.onnx_opset_version()}, not {opset}")
    graph.validate()
    infos = graph.infer()
    writer = OnnxWriter(graph, opset, infos)
    for node in graph.nodes:
        writer.node(node)
    inputs = [value_info(helper, n, i) for n, i in graph.inputs.items()]
    outputs = [value_info(helper, n, infos[n]) for n in graph.outputs]
    initializers = [numpy_helper.from_array(np.asarray(a), n) for n, a in graph.initializers.items()]
    initializers += [numpy_helper.from_array(np.asarray(a), n) for n, a in writer.constants.items()]
    g = helper.make_graph(writer.nodes, graph.name or "mnn_graph", inputs, outputs, initializers)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in sorted(writer.domains)]
    model = helper.make_model(
        g,
        opset_imports=opsets,
        producer_name=producer,
        ir_version=min(helper.VERSION_TABLE[-1][1], _ir_version(helper, opset)),
    )
    for key, value in graph.metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = str(key), str(value)
    return model


def save_onnx(graph: Graph, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> Path:
    """Write the graph as an .onnx file (weights in `<name>.data` beside it when over 1 GiB)."""
    onnx = require_onnx("exporting to ONNX")
    model = to_onnx(graph, opset)
    path = Path(path)
    external = graph.initializer_bytes() > EXTERNAL_DATA_BYTES
    onnx.save_model(
        model, str(path), save_as_external_data=external, all_tensors_to_one_file=True, location=path.name + ".data"
    )
    return path


def _ir_version(helper, opset: int) -> int:
    for _, ir, op, *_ in helper.VERSION_TABLE:
        if op >= opset:
            return ir
    return helper.VERSION_TABLE[-1][1]

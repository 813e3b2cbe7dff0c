"""Which of its placed ops mnn-arm runs as one (Backend.fuse; the core's side is mnn_core/runtime/fusion.py).

- A Mul (or Div) of float32 scores by a constant scalar whose product alone a Softmax over the last axis
  reads (an attention's 1 / sqrt(d) before its softmax): one op, arm.ScaledSoftmax (ops_norm.py), whose
  exponentials take the scale in the multiply they do anyway, so the scaled scores are never written and
  read back.
- A DequantizeLinear, the element-wise float ops it alone feeds and the QuantizeLinear after them (an
  int8 graph's HardSwish or SiLU): one byte table, arm.QLinearLUT (qlut.py).
"""

from __future__ import annotations

from mnn_core.backend import Fusion
from mnn_core.backend.kit.epilogue import constant_scalar
from mnn_core.graph.ir import Node
from mnn_core.ops.helpers import normalize_axis

from .qlut import qlinear_lut

#: the op of a Softmax with its input's scale fused in
SCALED_SOFTMAX = "arm.ScaledSoftmax"


def _dense_f32(offer, value: str) -> bool:
    info = offer.infos.get(value)
    return info is not None and info.is_static and info.dtype == "float32" and not info.layout


def scaled_softmax(node: Node, offer) -> Fusion | None:
    """arm.ScaledSoftmax from a Mul / Div by a constant scalar and the Softmax that alone reads it, or None."""
    if node.op not in ("Mul", "Div") or len(node.inputs) != 2 or len(node.outputs) != 1:
        return None
    out = node.outputs[0]
    softmax = offer.sole_reader(out)
    if softmax is None or softmax.op != "Softmax" or not _dense_f32(offer, out):
        return None
    rank = len(offer.infos[out].shape)
    if rank == 0 or normalize_axis(softmax.attrs.get("axis", -1), rank, "Softmax") != rank - 1:
        return None
    for x in node.inputs:
        s = constant_scalar(offer, node, x)  # Div: only x / s
        if s is None or not _dense_f32(offer, x):
            continue
        if offer.infos[x].shape == offer.infos[out].shape:  # not broadcast by the Mul
            name = f"{node.name}+{softmax.name}"
            fused = Node(SCALED_SOFTMAX, [x, s], list(softmax.outputs), {"scale_op": node.op}, name)
            return Fusion(fused, (node.name, softmax.name), "the scale taken inside the softmax's exponentials")
    return None


def fusions(offer, ctx) -> list[Fusion]:
    found = []
    for node in offer.nodes:
        fusion = scaled_softmax(node, offer) or qlinear_lut(node, offer)
        if fusion is not None:
            found.append(fusion)
    return found

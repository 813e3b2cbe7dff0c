"""Which of its placed ops mnn-opencl runs as one (Backend.fuse; the core's side is mnn_core/runtime/fusion.py).

A MatMul, the Add of a constant bias row of its N columns that alone reads it, and the activation that
alone reads the sum, if any (a Linear layer on a sequence as torch exports it, GELU after the first of
a transformer's MLP): one op, opencl.MatMulBias (ops_matmul.py), the row and the activation applied in
the GEMM's store. Two launches and two passes over the output fewer per layer.
`Session(fuse=False)` turns it off.
"""

from __future__ import annotations

from mnn_core.backend import Fusion
from mnn_core.graph.ir import Node
from mnn_core.ops.elementwise import ACTIVATION_OPS

from .ops_matmul import MATMUL_BIAS


def _bias_row(offer, bias: str, out_shape: tuple) -> bool:
    """Whether `bias` is a float32 constant of the output's last axis (leading axes of 1)."""
    info = offer.infos.get(bias)
    shape = tuple(info.shape) if info is not None else ()
    return (
        bias in offer.constants
        and info.dtype == "float32"
        and 1 <= len(shape) <= len(out_shape)
        and shape[-1] == out_shape[-1]
        and all(d == 1 for d in shape[:-1])
    )


def _activation_attrs(act: Node | None) -> dict | None:
    """The fused-activation attrs (as the core's fuse_activations pass sets them) of an activation op
    of one input whose parameters are attributes, else None."""
    if act is None or act.op not in ACTIVATION_OPS or len([n for n in act.inputs if n]) != 1:
        return None
    kind, params = ACTIVATION_OPS[act.op]
    if any(v not in act.attrs for v in params.values()):
        return None
    values = {k: float(act.attrs[v]) for k, v in params.items()}
    return {"activation": kind, "act_alpha": values.get("alpha", 0.0), "act_beta": values.get("beta", 0.0)}


def bias_fusion(matmul: Node, offer) -> Fusion | None:
    """opencl.MatMulBias of `matmul`, the Add of a bias row that alone reads it and the activation that
    alone reads the sum, or None."""
    if matmul.op != "MatMul" or matmul.attrs.get("activation", "none") != "none":
        return None
    y = offer.infos.get(matmul.outputs[0])
    add = offer.sole_reader(matmul.outputs[0])
    if y is None or not y.is_static or y.dtype != "float32" or len(y.shape) < 2 or add is None or add.op != "Add":
        return None
    if len(add.inputs) != 2 or add.inputs.count(matmul.outputs[0]) != 1:
        return None
    bias = add.inputs[1 - add.inputs.index(matmul.outputs[0])]
    if not _bias_row(offer, bias, tuple(y.shape)) or tuple(offer.infos[add.outputs[0]].shape) != tuple(y.shape):
        return None
    act_attrs = _activation_attrs(offer.sole_reader(add.outputs[0]))
    group = (matmul, add, offer.sole_reader(add.outputs[0])) if act_attrs else (matmul, add)
    attrs = {**matmul.attrs, **(act_attrs or {})}
    node = Node(MATMUL_BIAS, [*matmul.inputs, bias], [group[-1].outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(node, tuple(n.name for n in group), "bias and activation in the GEMM's store")


def fusions(offer) -> list[Fusion]:
    return [f for node in offer.nodes if (f := bias_fusion(node, offer)) is not None]

"""What a backend's GEMM epilogue can take over from the graph: a constant bias row added to the
product's rows, a constant scalar it is multiplied or divided by, and an activation applied as the
results are stored (named as the core's fuse_activations pass names them, mnn_core/graph/passes.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...graph.ir import Node
from ...ops.elementwise import ACTIVATION_OPS

if TYPE_CHECKING:
    from ..fusion import FusionOffer


def float32_static(offer: FusionOffer, name: str) -> bool:
    """Whether value `name` of a backend's offer is float32 with a static shape."""
    info = offer.infos.get(name)
    return info is not None and info.is_static and info.dtype == "float32"


def bias_row(offer: FusionOffer, bias: str, out_shape: tuple) -> bool:
    """Whether `bias` is a float32 constant along the output's last axis (any leading axes of 1)."""
    shape = tuple(offer.infos[bias].shape) if bias in offer.infos else ()
    return (
        bias in offer.constants
        and float32_static(offer, bias)
        and 1 <= len(shape) <= len(out_shape)
        and shape[-1] == out_shape[-1]
        and all(d == 1 for d in shape[:-1])
    )


def constant_scalar(offer: FusionOffer, node: Node | None, value: str) -> str | None:
    """The constant float32 scalar that `node` multiplies `value` by (Mul) or divides it by (Div)."""
    if node is None or node.op not in ("Mul", "Div") or len(node.inputs) != 2 or node.inputs.count(value) != 1:
        return None
    if node.op == "Div" and node.inputs[0] != value:
        return None
    other = node.inputs[1 - node.inputs.index(value)]
    info = offer.infos.get(other)
    if other not in offer.constants or not float32_static(offer, other) or any(d != 1 for d in info.shape):
        return None
    return other


def activation_attrs(act: Node | None) -> dict | None:
    """The fused-activation attrs of an activation op of one input whose parameters are attributes,
    else None."""
    if act is None or act.op not in ACTIVATION_OPS or len([n for n in act.inputs if n]) != 1:
        return None
    kind, params = ACTIVATION_OPS[act.op]
    if any(v not in act.attrs for v in params.values()):
        return None
    values = {k: float(act.attrs[v]) for k, v in params.items()}
    return {"activation": kind, "act_alpha": values.get("alpha", 0.0), "act_beta": values.get("beta", 0.0)}

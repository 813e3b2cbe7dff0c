"""Graph patterns that the GPU backends' fusions share (mnn-vulkan's and mnn-opencl's fuse.py): a
Transpose read by strides and a residual Add with the LayerNormalization of its sum. Each backend
decides what its kernels take; the matching is here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ...graph.ir import Node
from ..fusion import Fusion
from .epilogue import float32_static

if TYPE_CHECKING:
    from ..fusion import FusionOffer


def transpose_perm(node: Node, rank: int) -> list[int]:
    """A Transpose's perm for an input of `rank` dims (none given: the axes reversed)."""
    return [int(p) for p in node.attrs.get("perm") or range(rank - 1, -1, -1)]


def sole_transpose(offer: FusionOffer, producers: dict, value: str) -> Node | None:
    """The Transpose on this backend that makes `value`, read by nothing else, of a float32 tensor of
    static shape, else None."""
    node = producers.get(value)
    if node is None or node.op != "Transpose" or offer.sole_reader(value) is None:
        return None
    return node if float32_static(offer, node.inputs[0]) else None


def transposed_operands(
    offer: FusionOffer, producers: dict, operands: list, min_rank: int = 0
) -> tuple[list, dict, list]:
    """The two operands of a MatMul or binary op, each that a sole Transpose (of at least `min_rank`
    dims) makes read from that Transpose's input instead: (operands, {"perm_a" / "perm_b": perm},
    the Transposes taken). An operand given twice is left alone."""
    operands, perms, taken = list(operands), {}, []
    for i, key in enumerate(("perm_a", "perm_b")):
        t = sole_transpose(offer, producers, operands[i])
        if t is None or operands.count(operands[i]) != 1:
            continue
        rank = len(offer.infos[t.inputs[0]].shape)
        if rank >= min_rank:
            perms[key] = transpose_perm(t, rank)
            operands[i] = t.inputs[0]
            taken.append(t)
    return operands, perms, taken


def add_layernorm_fusion(
    add: Node, offer: FusionOffer, order: dict, op: str, params_fit: Callable[[int, list], bool]
) -> Fusion | None:
    """Op `op` in place of `add` (two float32 tensors of one shape) and the LayerNormalization of its
    sum, when every other reader of the sum runs on this backend after that LayerNormalization (the
    fused op takes its place and also writes the sum for them). `params_fit(length, infos)`: whether the
    backend's row kernel takes rows of `length` and the norm's scale / bias of these value infos."""
    if add.op != "Add" or len(add.inputs) != 2 or not all(float32_static(offer, v) for v in add.inputs):
        return None
    shapes = {tuple(offer.infos[v].shape) for v in (*add.inputs, add.outputs[0])}
    readers = offer.readers.get(add.outputs[0], ())
    norms = [r for r in readers if r.op == "LayerNormalization" and r.inputs[0] == add.outputs[0]]
    if len(shapes) != 1 or len(norms) != 1 or len(norms[0].outputs) != 1 or norms[0].name not in order:
        return None
    norm, shape = norms[0], next(iter(shapes))
    if not shape:
        return None
    length = 1
    for d in shape[norm.attrs.get("axis", -1) % len(shape) :]:
        length *= d
    params = [v for v in norm.inputs[1:3] if v]
    if any(v in (add.outputs[0], *add.inputs) for v in params):
        return None
    if not params_fit(length, [offer.infos[v] for v in params]):
        return None
    others = [r for r in readers if r is not norm]
    if any(r.name not in order or order[r.name] < order[norm.name] for r in others):
        return None
    outputs = [norm.outputs[0]] + ([add.outputs[0]] if others or add.outputs[0] in offer.outputs else [])
    attrs = {**norm.attrs, "has_scale": int(len(norm.inputs) > 1 and bool(norm.inputs[1]))}
    attrs["has_bias"] = int(len(norm.inputs) > 2 and bool(norm.inputs[2]))
    node = Node(op, [*add.inputs, *params], outputs, attrs, f"{add.name}+{norm.name}")
    return Fusion(node, (add.name, norm.name), "the residual sum normalized as it is read")

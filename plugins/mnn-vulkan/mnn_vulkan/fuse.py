"""Which of its placed ops mnn-vulkan runs as one (Backend.fuse; the core's side is mnn_core/runtime/fusion.py).

A MatMul and, around it, what gemm.comp does in the same dispatch: one op, vulkan.FusedMatMul
(kernels/fused.py), that takes the place of

- a Transpose whose output only the MatMul reads, on either operand: read through permuted strides
  (attention's heads, K transposed for Q @ K^T);
- then a Mul or Div of the product by a constant scalar that alone reads it (attention's scale);
- then an Add, that alone reads the result, of a float32 tensor that broadcasts to it without
  growing it (a Linear layer's bias row; attention's mask);
- then the activation that alone reads the sum (GELU after a transformer MLP's first layer), or, in
  float32 sessions, a Mul by a constant row (ConvNeXt's layer scale) where B and the added tensor
  are constants: the factors are folded into copies of them as the segment is recorded.

Each one saves a dispatch and a pass over the product; the operands' batch dims, permuted, must
still collapse to gemm.comp's two (kernels/fused.py: fused_plan), else nothing is fused.

A binary op and a Transpose that only it reads, on either operand: one op,
vulkan.TransposedBinary (kernels/binary_t.py), binary.comp reading that operand by permuted strides.
A Split and a Transpose that only it reads: vulkan.TransposedSplit (kernels/split_t.py), each piece
copied straight from the Transpose's input.

And an Add of two float32 tensors of one shape (a residual) with the LayerNormalization of its sum,
in float32 sessions: one op, vulkan.AddLayerNorm (kernels/add_norm.py), a work group per row adding
as it reads, which also stores the sum when something else reads it (the next residual).
`Session(fuse=False)` turns them off.
"""

from __future__ import annotations

from mnn_core.backend import Fusion
from mnn_core.backend.kit.epilogue import activation_attrs, bias_row, constant_scalar, float32_static
from mnn_core.backend.kit.gpu_fusion import (
    add_layernorm_fusion,
    sole_transpose,
    transpose_perm,
    transposed_operands,
)
from mnn_core.graph.ir import Node

from .kernels.add_norm import ADD_LAYERNORM, fits
from .kernels.binary_t import TRANSPOSED_BINARY, plan
from .kernels.fused import FUSED_MATMUL, fused_plan
from .kernels.split_t import TRANSPOSED_SPLIT

#: binary.comp's float ops (PRelu's slope broadcasts by its own rule and stays apart)
BINARY_OPS = ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min")


def _added(offer, node: Node | None, value: str, shape: tuple) -> str | None:
    """The other operand of an Add `node` of `value` whose result keeps `shape`, when it is a float32
    tensor of static shape that broadcasts to it."""
    if node is None or node.op != "Add" or len(node.inputs) != 2 or node.inputs.count(value) != 1:
        return None
    other = node.inputs[1 - node.inputs.index(value)]
    if not float32_static(offer, other) or tuple(offer.infos[node.outputs[0]].shape) != shape:
        return None
    o = tuple(offer.infos[other].shape)
    fits = len(o) <= len(shape) and all(d in (1, s) for d, s in zip(o[::-1], shape[::-1]))
    return other if fits else None


def _column_scale(offer, node: Node | None, value: str, inputs: list, extra: list, attrs: dict) -> str | None:
    """The constant row `node` multiplies `value` by, one factor per column (ConvNeXt's layer scale),
    where B and the added tensor (if any) are constants the factors can be folded into."""
    if node is None or node.op != "Mul" or len(node.inputs) != 2 or node.inputs.count(value) != 1:
        return None
    other = node.inputs[1 - node.inputs.index(value)]
    shape = tuple(offer.infos[value].shape)
    if not bias_row(offer, other, shape) or tuple(offer.infos[node.outputs[0]].shape) != shape:
        return None
    if inputs[1] not in offer.constants or "perm_b" in attrs:
        return None
    return None if attrs.get("add") and not bias_row(offer, extra[0], shape) else other


def matmul_fusion(matmul: Node, offer, producers: dict, scale_columns: bool = True) -> Fusion | None:
    """vulkan.FusedMatMul of `matmul` and what around it gemm.comp can do (the module's list), or None.
    `scale_columns`: fold a per-column Mul into constant weights (float32 sessions)."""
    if matmul.op != "MatMul" or len(matmul.inputs) != 2 or matmul.inputs[0] == matmul.inputs[1]:
        return None
    y = offer.infos.get(matmul.outputs[0])
    if y is None or not y.is_static or y.dtype != "float32" or not all(float32_static(offer, v) for v in matmul.inputs):
        return None
    shape = tuple(y.shape)
    inputs, perms, before = transposed_operands(offer, producers, matmul.inputs)
    attrs = {**matmul.attrs, **perms}
    after, out, extra = [], matmul.outputs[0], []
    nxt = offer.sole_reader(out)
    # an activation the core already fused into the MatMul comes before anything after it
    epilogue = attrs.get("activation", "none") == "none"
    if epilogue and (scalar := constant_scalar(offer, nxt, out)):
        attrs["scale"] = nxt.op
        extra.append(scalar)
        after.append(nxt)
        out = nxt.outputs[0]
        nxt = offer.sole_reader(out)
    if epilogue and (added := _added(offer, nxt, out, shape)):
        attrs["add"] = 1
        extra.insert(0, added)
        after.append(nxt)
        out = nxt.outputs[0]
        nxt = offer.sole_reader(out)
    if epilogue and scale_columns and (gamma := _column_scale(offer, nxt, out, inputs, extra, attrs)):
        attrs["col_scale"] = 1
        extra.append(gamma)
        after.append(nxt)
        out = nxt.outputs[0]
        nxt = offer.sole_reader(out)
    elif epilogue and (act := activation_attrs(nxt)):
        attrs.update(act)
        after.append(nxt)
    if not before and not after:
        return None
    shapes = [tuple(offer.infos[v].shape) for v in inputs]
    add_shape = tuple(offer.infos[extra[0]].shape) if attrs.get("add") else None
    if fused_plan(shapes[0], attrs.get("perm_a"), shapes[1], attrs.get("perm_b"), add_shape) is None:
        return None
    group = (*before, matmul, *after)
    node = Node(FUSED_MATMUL, inputs + extra, [group[-1].outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(node, tuple(n.name for n in group), "transposes, scale, added tensor and activation in the GEMM")


def binary_fusion(node: Node, offer, producers: dict) -> Fusion | None:
    """vulkan.TransposedBinary of a float32 binary op `node` and the Transposes only it reads, or None."""
    if node.op not in BINARY_OPS or len(node.inputs) != 2 or node.inputs[0] == node.inputs[1]:
        return None
    if not all(float32_static(offer, v) for v in (*node.inputs, node.outputs[0])):
        return None
    inputs, perms, before = transposed_operands(offer, producers, node.inputs)
    attrs = {"op": node.op, **perms}
    if not before:
        return None
    shapes = [tuple(offer.infos[v].shape) for v in inputs]
    out = tuple(offer.infos[node.outputs[0]].shape)
    if plan(out, shapes[0], attrs.get("perm_a"), shapes[1], attrs.get("perm_b")) is None:
        return None
    group = (*before, node)
    fused = Node(TRANSPOSED_BINARY, inputs, [node.outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(fused, tuple(n.name for n in group), "the Transpose read by strides in the binary op")


def split_fusion(split: Node, offer, producers: dict) -> Fusion | None:
    """vulkan.TransposedSplit of `split` and the Transpose (of at most 6 dims) that only it reads, or None."""
    if split.op != "Split" or not split.inputs or any(not v for v in split.outputs):
        return None
    t = sole_transpose(offer, producers, split.inputs[0])
    if t is None or len(offer.infos[t.inputs[0]].shape) > 6:
        return None
    if not all(offer.infos.get(v) is not None and offer.infos[v].is_static for v in split.outputs):
        return None
    attrs = {"axis": int(split.attrs.get("axis", 0)), "perm": transpose_perm(t, len(offer.infos[t.inputs[0]].shape))}
    node = Node(TRANSPOSED_SPLIT, [t.inputs[0]], list(split.outputs), attrs, f"{t.name}+{split.name}")
    return Fusion(node, (t.name, split.name), "the pieces copied straight from the Transpose's input")


def fusions(offer, precision: str = "normal") -> list[Fusion]:
    """The fusions of a plan's ops placed here, none sharing an op (the sum of two products is one
    MatMul's added tensor, not both's); AddLayerNorm only where tensors stay float32
    (add_norm_rows.comp has no float16 variant)."""
    producers = {out: node for node in offer.nodes for out in node.outputs}
    low = precision == "low"
    order = {node.name: i for i, node in enumerate(offer.nodes)}
    kinds = [
        lambda node: matmul_fusion(node, offer, producers, not low),
        lambda node: binary_fusion(node, offer, producers) or split_fusion(node, offer, producers),
    ]
    if not low:
        kinds.append(lambda node: add_layernorm_fusion(node, offer, order, ADD_LAYERNORM, fits))
    found, taken = [], set()
    for kind in kinds:
        for node in offer.nodes:
            f = None if node.name in taken else kind(node)
            if f is not None and not taken & set(f.replaces):
                found.append(f)
                taken |= set(f.replaces)
    return found

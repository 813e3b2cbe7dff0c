"""Which of its placed ops mnn-opencl runs as one (Backend.fuse; the core's side is mnn_core/runtime/fusion.py).

A MatMul and, around it, what its GEMM can do in the same launch: one op, opencl.FusedMatMul
(ops_matmul.py), that takes the place of

- a Transpose whose output only the MatMul reads, on either operand: the GEMM reads the Transpose's
  input through permuted strides (attention's heads, K transposed for Q @ K^T);
- then a Mul or Div of the product by a constant scalar that alone reads it (attention's scale): the
  GEMM's alpha;
- then the Add of a constant bias row of its N columns that alone reads the result (a Linear layer
  on a sequence, as torch exports it): the GEMM's C, the same for every row;
- then, where B is a constant matrix, the Mul by a constant row of N values that alone reads the
  result (ConvNeXt's layer scale): folded into B's columns and the bias row once, at resize;
- then the activation that alone reads the sum (GELU after a transformer MLP's first layer);
- then a Transpose that alone reads the result and keeps its last axis last (attention's heads
  gathered back): the GEMM stores through permuted strides.

A Conv, the Add of a residual of its output's shape that alone reads it, and the activation that
alone reads the sum (a ResNet block's end): one op, opencl.FusedConv (ops_conv.py), whose implicit
GEMM adds the residual before the activation as it stores (other convolution kernels store, then
one element-wise pass adds it and applies the activation).

And an Add of two same-shape tensors (a residual) and the LayerNormalization of the sum: one op,
opencl.AddLayerNorm (ops_norm.py), whose row kernel adds as it reads and also stores the sum when
something else reads it (the next residual).

And an Add of two same-shape tensors, one made by a Transpose that only it reads (ConvNeXt's residual after its
channels-last block): one op, opencl.TransposeAdd (copies.py), whose tiled transpose adds as it stores.

And a Transpose moving axis 1 last whose output only a LayerNormalization over that last axis reads
(ConvNeXt's channels-last blocks): one op, opencl.TransposeLayerNorm (ops_norm.py), whose kernel reads
the channels-first tensor and stores the normalized channels-last one.

Each saves a launch and a pass over a tensor. `Session(fuse=False)` turns them off.
"""

from __future__ import annotations

from mnn_core.backend import Fusion
from mnn_core.backend.kit.epilogue import activation_attrs, bias_row, constant_scalar, float32_static
from mnn_core.backend.kit.gpu_fusion import add_layernorm_fusion, transpose_perm, transposed_operands
from mnn_core.graph.ir import Node

from .copies import TRANSPOSE_ADD
from .ops_conv import FUSED_CONV
from .ops_matmul import FUSED_MATMUL
from .ops_norm import ADD_LAYERNORM, TRANSPOSE_LAYERNORM


def _store_perm(offer, node: Node | None, rank: int) -> list[int] | None:
    """The perm of a Transpose `node` of a rank-`rank` float32 value that keeps its last axis last
    (the GEMM's stores stay contiguous along N), else None."""
    if node is None or node.op != "Transpose" or not float32_static(offer, node.outputs[0]):
        return None
    perm = transpose_perm(node, rank)
    return perm if len(perm) == rank and perm[-1] == rank - 1 else None


def matmul_fusion(matmul: Node, offer, producers: dict) -> Fusion | None:
    """opencl.FusedMatMul of `matmul` and what around it the GEMM can do (the module's list), or None."""
    if matmul.op != "MatMul" or len(matmul.inputs) != 2:
        return None
    y = offer.infos.get(matmul.outputs[0])
    if y is None or not y.is_static or y.dtype != "float32" or len(y.shape) < 2:
        return None
    inputs, perms, before = transposed_operands(offer, producers, matmul.inputs, min_rank=2)
    attrs = {**matmul.attrs, **perms}
    after, out, extra = [], matmul.outputs[0], []
    nxt = offer.sole_reader(out)
    # an activation the core already fused into the MatMul comes before a scale, bias or activation
    epilogue = attrs.get("activation", "none") == "none"
    if epilogue and (scalar := constant_scalar(offer, nxt, out)):
        attrs["scale"] = nxt.op
        extra.append(scalar)
        after.append(nxt)
        out = nxt.outputs[0]
        nxt = offer.sole_reader(out)
    if epilogue and nxt is not None and nxt.op == "Add" and len(nxt.inputs) == 2 and nxt.inputs.count(out) == 1:
        bias = nxt.inputs[1 - nxt.inputs.index(out)]
        if bias_row(offer, bias, tuple(y.shape)) and tuple(offer.infos[nxt.outputs[0]].shape) == tuple(y.shape):
            attrs["bias"] = 1
            extra.insert(0, bias)
            after.append(nxt)
            out = nxt.outputs[0]
            nxt = offer.sole_reader(out)
    if epilogue and (gamma := _column_scale(offer, nxt, out, inputs[1], perms, tuple(y.shape))):
        attrs["col_scale"] = 1
        extra.append(gamma)
        after.append(nxt)
        out = nxt.outputs[0]
        nxt = offer.sole_reader(out)
    if epilogue and (act_attrs := activation_attrs(nxt)):
        attrs.update(act_attrs)
        after.append(nxt)
        out = after[-1].outputs[0]
        nxt = offer.sole_reader(out)
    if perm := _store_perm(offer, nxt, len(y.shape)):
        if all(len(offer.infos[v].shape) >= 2 for v in matmul.inputs):  # the product has y's rank
            attrs["perm_y"] = perm
            after.append(nxt)
    if not before and not after:
        return None
    group = (*before, matmul, *after)
    node = Node(FUSED_MATMUL, inputs + extra, [group[-1].outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(node, tuple(n.name for n in group), "transposes, scale, bias and activation in the GEMM")


def _column_scale(offer, node: Node | None, value: str, b: str, perms: dict, shape: tuple) -> str | None:
    """The constant row of N values that `node` multiplies `value` (an M x N product of a constant
    2-D B, read as stored) by, else None."""
    if node is None or node.op != "Mul" or len(node.inputs) != 2 or node.inputs.count(value) != 1:
        return None
    if b not in offer.constants or "perm_b" in perms or len(offer.infos[b].shape) != 2:
        return None
    other = node.inputs[1 - node.inputs.index(value)]
    if not bias_row(offer, other, shape) or tuple(offer.infos[node.outputs[0]].shape) != shape:
        return None
    return other


def conv_fusion(conv: Node, offer) -> Fusion | None:
    """opencl.FusedConv of `conv`, the residual Add after it and the activation after that, or None."""
    if conv.op != "Conv" or conv.attrs.get("activation", "none") != "none" or len(conv.inputs) < 2:
        return None
    out = conv.outputs[0]
    add = offer.sole_reader(out)
    if not float32_static(offer, out) or add is None or add.op != "Add" or len(add.inputs) != 2:
        return None
    if add.inputs.count(out) != 1:
        return None
    res = add.inputs[1 - add.inputs.index(out)]
    shape = tuple(offer.infos[out].shape)
    if not float32_static(offer, res) or tuple(offer.infos[res].shape) != shape or len(shape) != 4:
        return None
    if tuple(offer.infos[add.outputs[0]].shape) != shape:
        return None
    group, attrs = [conv, add], {k: v for k, v in conv.attrs.items() if k != "activation"}
    act = offer.sole_reader(add.outputs[0])
    if act_attrs := activation_attrs(act):
        attrs.update(act_attrs)
        group.append(act)
    has_bias = len(conv.inputs) > 2 and bool(conv.inputs[2])
    attrs["has_bias"] = int(has_bias)
    inputs = [conv.inputs[0], conv.inputs[1], res] + ([conv.inputs[2]] if has_bias else [])
    node = Node(FUSED_CONV, inputs, [group[-1].outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(node, tuple(n.name for n in group), "the residual and the activation in the convolution's store")


def _norm_params_fit(length: int, params: list) -> bool:
    """Scale and bias of the normalized length only, as layernorm_rows reads them."""
    return all(tuple(p.shape) == (length,) for p in params)


def transpose_add_fusion(add: Node, offer, producers: dict) -> Fusion | None:
    """opencl.TransposeAdd of `add` and the Transpose that makes one of its operands, or None."""
    if add.op != "Add" or len(add.inputs) != 2 or add.attrs.get("activation", "none") != "none":
        return None
    shape = tuple(offer.infos[add.outputs[0]].shape) if float32_static(offer, add.outputs[0]) else None
    if shape is None or any(not float32_static(offer, v) or tuple(offer.infos[v].shape) != shape for v in add.inputs):
        return None
    inputs, perms, before = transposed_operands(offer, producers, add.inputs)
    if len(before) != 1:
        return None
    t = 0 if "perm_a" in perms else 1
    attrs = {"perm": list(perms["perm_a" if t == 0 else "perm_b"])}
    node = Node(TRANSPOSE_ADD, [inputs[t], inputs[1 - t]], [add.outputs[0]], attrs, f"{before[0].name}+{add.name}")
    return Fusion(node, (before[0].name, add.name), "the Add in the transpose's store")


def transpose_layernorm_fusion(t: Node, offer) -> Fusion | None:
    """opencl.TransposeLayerNorm of Transpose `t` (axis 1 moved last) and the LayerNormalization over
    that axis that alone reads it, with scale and bias of the channels' length, or None."""
    if t.op != "Transpose" or not float32_static(offer, t.inputs[0]) or not float32_static(offer, t.outputs[0]):
        return None
    rank = len(offer.infos[t.inputs[0]].shape)
    if rank < 3 or transpose_perm(t, rank) != [0, *range(2, rank), 1]:
        return None
    norm = offer.sole_reader(t.outputs[0])
    if norm is None or norm.op != "LayerNormalization" or norm.inputs[0] != t.outputs[0] or len(norm.outputs) != 1:
        return None
    if int(norm.attrs.get("axis", -1)) % rank != rank - 1:
        return None
    params = [v for v in norm.inputs[1:3] if v]
    if not _norm_params_fit(offer.infos[t.inputs[0]].shape[1], [offer.infos[v] for v in params]):
        return None
    attrs = {"epsilon": float(norm.attrs.get("epsilon", 1e-5))}
    attrs["has_scale"] = int(len(norm.inputs) > 1 and bool(norm.inputs[1]))
    attrs["has_bias"] = int(len(norm.inputs) > 2 and bool(norm.inputs[2]))
    node = Node(TRANSPOSE_LAYERNORM, [t.inputs[0], *params], [norm.outputs[0]], attrs, f"{t.name}+{norm.name}")
    return Fusion(node, (t.name, norm.name), "the norm reads the channels-first tensor and stores it channels-last")


def fusions(offer) -> list[Fusion]:
    producers = {out: node for node in offer.nodes for out in node.outputs}
    order = {node.name: i for i, node in enumerate(offer.nodes)}
    found = [f for node in offer.nodes if (f := matmul_fusion(node, offer, producers)) is not None]
    taken = {name for f in found for name in f.replaces}
    # each kind in turn over the whole graph; a fusion overlapping one found before it is dropped
    matchers = (
        lambda node: conv_fusion(node, offer),
        lambda node: add_layernorm_fusion(node, offer, order, ADD_LAYERNORM, _norm_params_fit),
        lambda node: transpose_layernorm_fusion(node, offer),
        lambda node: transpose_add_fusion(node, offer, producers),
    )
    for match in matchers:
        for node in offer.nodes:
            f = match(node)
            if f is not None and not taken & set(f.replaces):
                found.append(f)
                taken |= set(f.replaces)
    return found

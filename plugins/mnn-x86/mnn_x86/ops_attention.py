"""x86.Attention: MatMul(Q, K^T), an optional scale (Mul or Div by a constant scalar), an optional additive
mask that is the same for every query row (BERT's padding mask), Softmax over the keys and MatMul by V,
as one op (csrc/op_attention.c) that never writes the scores out.

`attention_fusion` finds the pattern for fuse.py; it also takes in the Transpose that makes K^T from K
(the GEMM packs K either way), the Transposes that split Q, K and V into heads ([b, seq, heads, d] ->
[b, heads, seq, d], or [b, heads, d, seq] for K^T: the op reads each head's rows in place) and the
Transpose that swaps the heads back after the second MatMul (the GEMM writes each head's rows in
place), where those are the only readers of their inputs; and a packed qkv projection's Transpose
([b, seq, 3, heads, d] -> [3, b, heads, seq, d]) and Split into Q, K and V (ViT's), each part read in place.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import Fusion
from mnn_core.errors import BackendError
from mnn_core.graph.ir import Node
from mnn_core.ops.helpers import broadcast_shape, normalize_axis

from . import _x86
from ._common import kernel, static_shape
from .ops_matmul import _batch_offsets

#: the op of the fused attention
ATTENTION = "x86.Attention"


def _dense_f32(offer, *values) -> bool:
    infos = [offer.infos.get(v) for v in values]
    return all(i is not None and i.is_static and i.dtype == "float32" and not i.layout for i in infos)


def _swaps_last_two(node: Node | None, rank: int) -> bool:
    perm = list(node.attrs.get("perm") or ()) if node is not None and node.op == "Transpose" else []
    return perm == [*range(rank - 2), rank - 1, rank - 2]


#: the Transposes that split [b, seq, heads, d] into heads: [b, heads, seq, d] (Q, V), [b, heads, d, seq] (K^T)
HEADS_SPLIT, HEADS_SPLIT_KT = [0, 2, 1, 3], [0, 2, 3, 1]
#: the Transpose of a packed qkv projection, [b, seq, 3, heads, d] -> [3, b, heads, seq, d], before its Split
QKV_SPLIT = [2, 0, 3, 1, 4]


def _producer(offer, value: str) -> Node | None:
    return next((n for n in offer.nodes if value in n.outputs), None)


def _scalar_constant(offer, value: str) -> bool:
    info = offer.infos.get(value)
    return value in offer.constants and info is not None and int(np.prod(info.shape, dtype=np.int64)) == 1


def _row_mask(offer, mask: str, scores_shape: tuple) -> bool:
    """Whether `mask` broadcasts to the scores with one row for every query (its next-to-last axis 1)."""
    info = offer.infos.get(mask)
    if info is None or not _dense_f32(offer, mask) or len(info.shape) > len(scores_shape):
        return False
    shape = (1,) * (len(scores_shape) - len(info.shape)) + tuple(info.shape)
    try:
        return broadcast_shape(shape, scores_shape) == tuple(scores_shape) and shape[-2] == 1
    except Exception:  # noqa: BLE001 - shapes that do not broadcast: not this pattern
        return False


def _qkv_part(offer, value: str, reader: Node):
    """(the Split, the Squeeze, i) where `value`, read by `reader` alone, is the Squeeze of output i of a Split
    into three along axis 0 of a [3, b, heads, seq, d], each read by the next alone; else None."""
    squeeze = _producer(offer, value)
    if squeeze is None or squeeze.op != "Squeeze" or offer.sole_reader(value) is not reader:
        return None
    part = squeeze.inputs[0]
    split = _producer(offer, part)
    if split is None or split.op != "Split" or len(split.outputs) != 3 or offer.sole_reader(part) is not squeeze:
        return None
    whole = offer.infos.get(split.inputs[0])
    if whole is None or len(whole.shape) != 5 or normalize_axis(split.attrs.get("axis", 0), 5, "Split") != 0:
        return None
    one = (1, *whole.shape[1:])
    if any(tuple(offer.infos[o].shape) != one for o in split.outputs):
        return None
    return (split, squeeze, split.outputs.index(part)) if tuple(offer.infos[value].shape) == one[1:] else None


def _qkv_split(offer, inputs: list, readers: tuple):
    """(the [b, seq, 3, heads, d] tensor, the nodes that permute and split it, each input's part) where Q, K
    and V are its three parts, each read in place by its reader alone; else None."""
    parts = [_qkv_part(offer, x, r) for x, r in zip(inputs, readers)]
    if not all(parts) or len({p[0].name for p in parts}) != 1 or sorted(p[2] for p in parts) != [0, 1, 2]:
        return None
    split = parts[0][0]
    permute = _producer(offer, split.inputs[0])
    if permute is None or permute.op != "Transpose" or list(permute.attrs.get("perm") or ()) != QKV_SPLIT:
        return None
    if offer.sole_reader(split.inputs[0]) is not split or not _dense_f32(offer, permute.inputs[0]):
        return None
    return permute.inputs[0], [permute, split, *(p[1] for p in parts)], [p[2] for p in parts]


def _softmax_last(node: Node | None, rank: int) -> bool:
    axis = node.attrs.get("axis", -1) if node is not None and node.op == "Softmax" else None
    return axis is not None and normalize_axis(axis, rank, "Softmax") == rank - 1


def _scale_and_mask(node: Node | None, scores_value: str, scores: tuple, offer):
    """The scale and mask ops from `node` (the sole reader of the scores) on: (ops, their extra inputs,
    attrs, the node after them), or None where one of them is not of the fused form."""
    ops, extra, attrs, x = [], [], {"scale_op": "", "mask": False}, scores_value
    if (
        node is not None
        and node.op in ("Mul", "Div")
        and x in node.inputs
        and (node.op == "Mul" or node.inputs[0] == x)
    ):
        scale = node.inputs[1 - node.inputs.index(x)]
        if scale == x or not _scalar_constant(offer, scale) or tuple(offer.infos[node.outputs[0]].shape) != scores:
            return None
        attrs["scale_op"], x = node.op, node.outputs[0]
        ops.append(node)
        extra.append(scale)
        node = offer.sole_reader(x)
    if node is not None and node.op == "Add" and len(node.inputs) == 2:
        mask = node.inputs[1 - node.inputs.index(x)]
        if mask == x or not _row_mask(offer, mask, scores) or tuple(offer.infos[node.outputs[0]].shape) != scores:
            return None
        attrs["mask"], x = True, node.outputs[0]
        ops.append(node)
        extra.append(mask)
        node = offer.sole_reader(x)
    return ops, extra, attrs, node


def attention_fusion(first: Node, offer) -> Fusion | None:
    """x86.Attention from the MatMul `first` (Q times K^T) up to the MatMul by V, or None."""
    if first.op != "MatMul" or len(first.inputs) != 2 or not _dense_f32(offer, *first.inputs, first.outputs[0]):
        return None
    scores = tuple(offer.infos[first.outputs[0]].shape)
    q, kt = first.inputs
    rank = len(scores)
    if rank < 3 or any(tuple(offer.infos[v].shape[:-2]) != scores[:-2] for v in (q, kt)):
        return None  # batch matrices only, none broadcast
    found = _scale_and_mask(offer.sole_reader(first.outputs[0]), first.outputs[0], scores, offer)
    if found is None or not _softmax_last(found[3], rank):
        return None
    ops, extra, attrs, softmax = found
    second = offer.sole_reader(softmax.outputs[0])
    if second is None or second.op != "MatMul" or len(second.inputs) != 2 or second.inputs[0] != softmax.outputs[0]:
        return None
    v = second.inputs[1]
    if v == softmax.outputs[0] or not _dense_f32(offer, v, second.outputs[0]):
        return None
    if tuple(offer.infos[v].shape[:-2]) != scores[:-2]:
        return None
    group, inputs, out = [first, *ops, softmax, second], [q, kt, v], second.outputs[0]
    # K^T made by a Transpose of K that nothing else reads: the GEMM packs K itself
    k_node = _producer(offer, kt)
    if _swaps_last_two(k_node, rank) and offer.sole_reader(kt) is first and _dense_f32(offer, k_node.inputs[0]):
        inputs[1], attrs["k_rows"] = k_node.inputs[0], 1
        group.insert(0, k_node)
    # Q, K^T (or K) and V made from [b, seq, heads, d] by a Transpose that nothing else reads: read in place
    k_rows = bool(attrs.get("k_rows"))
    k_split = (k_node, HEADS_SPLIT) if k_rows else (first, HEADS_SPLIT_KT)
    for i, (reader, perm) in enumerate(((first, HEADS_SPLIT), k_split, (second, HEADS_SPLIT))):
        node = _producer(offer, inputs[i])
        if rank != 4 or node is None or node.op != "Transpose" or list(node.attrs.get("perm") or ()) != perm:
            continue
        if offer.sole_reader(inputs[i]) is reader and _dense_f32(offer, node.inputs[0]):
            inputs[i], attrs[f"{'qkv'[i]}_seq_major"] = node.inputs[0], 1
            attrs["k_rows"] = 1 if i == 1 else attrs.get("k_rows", 0)
            group.insert(0, node)
    # Q, K and V the parts of one qkv projection, permuted and split by a Transpose and a Split: read in place
    qkv = _qkv_split(offer, inputs, (first, k_node, second)) if rank == 4 and k_rows else None
    if qkv is not None:
        inputs = [qkv[0]] * 3
        group[:0] = qkv[1]
        attrs.update(qkv_split=1, **{f"{x}_part": i for x, i in zip("qkv", qkv[2])})
    # the heads swapped back ([b, h, M, Dv] -> [b, M, h, Dv]) by a Transpose that alone reads the product
    after = offer.sole_reader(out)
    if (
        rank == 4
        and after is not None
        and after.op == "Transpose"
        and list(after.attrs.get("perm") or ()) == [0, 2, 1, 3]
    ):
        if _dense_f32(offer, after.outputs[0]):
            attrs["heads_back"], out = True, after.outputs[0]
            group.append(after)
    fused = Node(ATTENTION, [*inputs, *extra], [out], attrs, "+".join(n.name for n in group))
    return Fusion(fused, tuple(n.name for n in group), "the scores kept in cache, block by block")


def _seq_major(shape: tuple) -> tuple:
    """[b, seq, heads, d] as the [b, heads, seq, d] its Transpose made"""
    return (shape[0], shape[2], shape[1], shape[3])


def _walk(rows: int, cols: int, heads: int = 1) -> tuple:
    """ops.h's x86_attention_walk of a batch of [rows][cols] matrices: dense (heads 1), or each head's rows
    in place in [b][rows][heads][cols]"""
    return (1, rows * cols, 0, cols, 0) if heads == 1 else (heads, rows * heads * cols, cols, heads * cols, 0)


def _qkv_walk(shape: tuple, part: int) -> tuple:
    """ops.h's x86_attention_walk of part `part` (Q, K or V) of a [b, seq, 3, heads, d] qkv projection"""
    _, seq, _, heads, d = shape
    return (heads, seq * 3 * heads * d, d, 3 * heads * d, part * heads * d)


@kernel(ATTENTION)
def prepare_attention(node, ins, outs, constants, ctx, isa):
    """x86.Attention (attention_fusion): inputs Q, K^T (K with attrs k_rows), V, then the scale (attrs
    scale_op: "Mul" or "Div") and the mask (attrs mask), where present. q_seq_major, k_seq_major,
    v_seq_major: that input is [b, seq, heads, d], split into heads in place. qkv_split: inputs 0-2 are one
    [b, seq, 3, heads, d], Q, K and V its parts q_part, k_part and v_part."""
    attrs = node.attrs
    q, kt, v = (static_shape(i) for i in ins[:3])
    q_sm, k_sm, v_sm = (bool(attrs.get(f"{x}_seq_major")) for x in "qkv")
    k_rows = int(attrs.get("k_rows", 0))
    qkv = q if attrs.get("qkv_split") else None  # [b, seq, 3, heads, d], Q, K and V its parts
    if qkv:
        q = kt = v = (qkv[0], qkv[3], qkv[1], qkv[4])
    q, v = _seq_major(q) if q_sm else q, _seq_major(v) if v_sm else v
    m, d = q[-2:]
    n = kt[1] if k_sm else kt[-2] if k_rows else kt[-1]
    dv = v[-1]
    batch_shape = tuple(q[:-2])
    batch = int(np.prod(batch_shape, dtype=np.int64))
    heads = batch_shape[-1]
    scale, i = 1.0, 3
    if attrs.get("scale_op"):
        value = constants.get(node.inputs[i])
        if value is None:
            raise BackendError(
                f"x86: {node.name}'s scale is not a constant (ops_attention.py should not have fused it)"
            )
        value = float(np.asarray(value, np.float64).reshape(-1)[0])
        scale, i = (value if attrs["scale_op"] == "Mul" else 1.0 / value), i + 1
    p = {"batch": batch, "M": m, "N": n, "D": d, "Dv": dv, "k_rows": k_rows, "scale": scale}
    p.update(mask_input=-1, mask_cs=0)
    p["q"] = _walk(m, d, heads if q_sm else 1)
    p["k"] = _walk(n, d, heads if k_sm else 1) if k_rows else _walk(d, n)
    p["v"] = _walk(n, dv, heads if v_sm else 1)
    if qkv:
        p.update({x: _qkv_walk(qkv, int(attrs[f"{x}_part"])) for x in "qkv"})
    p["y"] = _walk(m, dv, heads if attrs.get("heads_back") else 1)  # output [b, M, h, Dv]: matrix t = (b, h)
    mask_off = None
    if attrs.get("mask"):
        mask = static_shape(ins[i])
        full = (1,) * (len(q) - len(mask)) + tuple(mask)
        p["mask_input"], p["mask_cs"] = i, 1 if full[-1] == n else 0
        mask_off = _batch_offsets(full[:-2], batch_shape, full[-1])
    return _x86.attention(isa, ctx.threads, ATTENTION, p, mask_off)

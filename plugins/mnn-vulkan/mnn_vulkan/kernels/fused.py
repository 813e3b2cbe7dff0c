"""vulkan.FusedMatMul (fuse.py proposes it): a MatMul whose gemm.comp dispatch also does the work of
the ops around it. Its operands are read through the strides of the Transposes it replaces
(attention's heads, K transposed); the product is scaled by a constant scalar (attention's 1/sqrt(d):
the shader's alpha), a tensor that broadcasts to it is added (a Linear layer's bias row, attention's
mask: the shader's bias, addressed by strides) and an activation applied as the results are stored.

Inputs: A's and B's sources, then the added tensor if attrs["add"], then the scalar if attrs["scale"]
("Mul" or "Div"), then a row of per-column factors if attrs["col_scale"] (float32 sessions, B and
the added tensor constants: their scaled copies are uploaded with the segment). attrs["perm_a"] /
["perm_b"]: the permutation the replaced Transpose applied.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mnn_core.backend.kit.activation import activation_code
from mnn_core.backend.kit.layout import broadcast_strides, collapse, contiguous_strides

from ..recorder import HALF_OPS
from . import register

FUSED_MATMUL = "vulkan.FusedMatMul"


def _view(shape: Sequence[int], perm: Sequence[int] | None) -> tuple[tuple, list]:
    """(shape, element strides) of `shape` (contiguous) seen through a Transpose's `perm`."""
    strides = contiguous_strides(tuple(shape))
    if perm is None:
        return tuple(shape), list(strides)
    return tuple(shape[p] for p in perm), [strides[p] for p in perm]


def fused_plan(a_shape, perm_a, b_shape, perm_b, add_shape=None) -> tuple | None:
    """gemm.comp's (m, n, k, nb1, nb2, A, B, C and added-tensor strides) for A @ B with both
    operands of rank >= 2 seen through their perms, the batch dims collapsed to at most two (None
    where more remain: the fusion is not made). The added tensor's strides are None without one."""
    (a_eff, sa), (b_eff, sb) = _view(a_shape, perm_a), _view(b_shape, perm_b)
    if len(a_eff) < 2 or len(b_eff) < 2 or a_eff[-1] != b_eff[-2]:
        return None
    m, k, n = a_eff[-2], a_eff[-1], b_eff[-1]
    batch = tuple(np.broadcast_shapes(a_eff[:-2], b_eff[:-2]))
    rank = len(batch)

    def batch_strides(shape, strides):
        pad = rank - len(shape)
        return [0 if d == 1 and o != 1 else s for d, o, s in zip((1,) * pad + shape, batch, [0] * pad + strides)]

    y_shape = batch + (m, n)
    sy = list(contiguous_strides(y_shape))
    s_add = broadcast_strides(add_shape, y_shape) if add_shape is not None else [0] * len(y_shape)
    dims, (ba, bb, bc, bt) = collapse(
        batch, batch_strides(a_eff[:-2], sa[:-2]), batch_strides(b_eff[:-2], sb[:-2]), sy[:-2], s_add[:-2]
    )
    if len(dims) > 2:
        return None
    pad = 2 - len(dims)
    nb1, nb2 = ([1] * pad + dims)[-2:]
    ba, bb, bc, bt = ([0] * pad + s for s in (ba, bb, bc, bt))
    a_st = (sa[-2], sa[-1], ba[0], ba[1])
    b_st = (sb[-2], sb[-1], bb[0], bb[1])
    add_st = (s_add[-2], s_add[-1], bt[0], bt[1]) if add_shape is not None else None
    return m, n, k, nb1, nb2, a_st, b_st, (bc[0], bc[1]), add_st


def _record(op, rec):
    from .matmul import _gemm

    attrs = op.node.attrs
    a, b, *extra = op.inputs
    add = extra[0] if attrs.get("add") else None
    plan = fused_plan(
        a.info.shape, attrs.get("perm_a"), b.info.shape, attrs.get("perm_b"), add.info.shape if add else None
    )
    if plan is None:  # fuse.py checked this when it made the node
        raise ValueError(f"{op.node.name}: the fused MatMul's batch no longer collapses to two dims")
    m, n, k, nb1, nb2, a_st, b_st, c_st, add_st = plan
    alpha = 1.0
    if attrs.get("scale"):
        scalar = float(np.asarray(op.constants[extra[1 if add else 0].name]).reshape(-1)[0])
        alpha = scalar if attrs["scale"] == "Mul" else 1.0 / scalar
    act, aa, ab = activation_code(attrs)
    bindings = [rec.tensor(a), rec.tensor(b), rec.tensor(add if add else a), rec.output(op.outputs[0])]
    if attrs.get("col_scale"):  # B and the added row times the factors, uploaded with the segment
        gamma = np.asarray(op.constants[extra[-1].name], "float32").reshape(-1)
        bindings[1] = rec.constant(np.asarray(op.constants[b.name], "float32") * gamma)
        if add is not None:
            bindings[2] = rec.constant(np.broadcast_to(np.asarray(op.constants[add.name], "float32"), (n,)) * gamma)
            add_st = (0, 1, 0, 0)
    _gemm(rec, bindings, m, n, k, nb1, nb2, a_st, b_st, c_st, add_st, alpha, 1.0, act, aa, ab)


register(FUSED_MATMUL, _record, efficiency=0.3)
HALF_OPS.add(FUSED_MATMUL)  # float16 tensors read directly (gemm_h, gemv_h, gemm_coop)

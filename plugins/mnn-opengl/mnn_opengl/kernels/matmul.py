"""MatMul (numpy broadcasting of batch dims, 1-D operands) and Gemm (transposes,
alpha, beta * C broadcast) in matmul.comp, with the fused activation. On a GPU a MatMul
whose B is shared by every batch, or batched alike with A, runs on the tiled convolution
(conv_tiled.gemm)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.codes import activation_code
from mnn_core.backend.kit.layout import broadcast_plan, collapse, contiguous_strides, pad_to

from ..recorder import element
from . import conv_tiled, register
from .loops import group_passes, group_size, loop_budget, within_budget


def _matmul_plan(a_shape, b_shape):
    """(batch dims, a batch strides, b batch strides, M, N, K, sam, sak, sbk, sbn)."""
    a2 = (1,) + tuple(a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if len(b_shape) == 1 else tuple(b_shape)
    m, k = a2[-2:]
    n = b2[-1]
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    sa_full, sb_full = contiguous_strides(a2), contiguous_strides(b2)
    a_batch = (1,) * (len(batch) - len(a2[:-2])) + a2[:-2]
    b_batch = (1,) * (len(batch) - len(b2[:-2])) + b2[:-2]
    sa = sa_full[:-2]
    sb = sb_full[:-2]
    sa = [0] * (len(batch) - len(sa)) + sa
    sb = [0] * (len(batch) - len(sb)) + sb
    sa = [0 if d == 1 else s for d, s in zip(a_batch, sa)]
    sb = [0 if d == 1 else s for d, s in zip(b_batch, sb)]
    dims, (sa, sb) = collapse(batch, sa, sb)
    return dims, sa, sb, m, n, k, sa_full[-2], sa_full[-1], sb_full[-2], sb_full[-1]


def _matmul_supports(node, ins):
    plan = _matmul_plan(ins[0].shape, ins[1].shape)
    dims, k = plan[0], plan[5]
    if len(dims) > 4:
        return f"{len(dims)} batch dims after collapsing (max 4)"
    return within_budget(group_passes(k), f"a MatMul over K={k}")


def _gemm_supports(node, ins):
    k = ins[0].shape[0] if node.attrs.get("transA", 0) else ins[0].shape[1]
    return within_budget(group_passes(k), f"a Gemm over K={k}")


#: outputs that keep a GPU busy with one invocation each; fewer, and a long K is shared by a group
GPU_OUTPUTS = 1 << 16


def _record_product(rec, params, reads, y, k):
    """One matmul.comp dispatch; a long K is shared by a work group per output (SPLIT_K): always
    on llvmpipe (its loop budget), on a GPU only where few outputs would leave it idle."""
    group = group_size(k)
    if group > 1 and loop_budget() is None and y.info.size >= GPU_OUTPUTS:
        group = 1
    rec.rows("matmul", params, reads, [y], y.info.size, group, "SPLIT_K")


def _record_matmul(op, rec):
    a, b = op.inputs
    y = op.outputs[0]
    dims, sa, sb, m, n, k, sam, sak, sbk, sbn = _matmul_plan(a.info.shape, b.info.shape)
    if _tiled_matmul(op, rec, dims, sa, sb, m, n, k):
        return
    params = [
        y.info.size,
        m,
        n,
        k,
        len(dims),
        pad_to(dims, 4, 1),
        pad_to(sa, 4),
        pad_to(sb, 4),
        element(a),
        element(b),
        sam,
        sak,
        sbk,
        sbn,
        -1,
        0,
        0,
        1.0,
        0.0,
        element(y),
        activation_code(op.node.attrs),
    ]
    _record_product(rec, params, [a, b], y, k)


def _tiled_matmul(op, rec, dims, sa, sb, m, n, k) -> bool:
    """The MatMul on conv_tiled.gemm, where it runs on a GPU (the option "opengl.gemm_path":
    "tiled" or "direct" forces the choice, as "opengl.conv_path" does for Conv) and B is shared
    by every batch (A's batches become rows) or batched alike with A; else False."""
    path = rec.options.get("opengl.gemm_path")
    gpu = rec.device.info().kind == "gpu" or bool(rec.options.get("opengl.gpu_tiling"))
    if path == "direct" or (path != "tiled" and not gpu) or len(dims) > 1:
        return False
    batch = dims[0] if dims else 1
    if batch > 1 and sa[0] == m * k and sb[0] == 0:
        batch, m = 1, batch * m
    elif batch > 1 and not (sa[0] == m * k and sb[0] == k * n):
        return False
    a, b = op.inputs
    act = activation_code(op.node.attrs)
    return conv_tiled.gemm(rec, a, b, op.outputs[0], batch, m, k, n, act, element, gpu)


def _record_gemm(op, rec):
    a, b = op.inputs[0], op.inputs[1]
    c = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    attrs = op.node.attrs
    m, n = y.info.shape
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    k = a.info.shape[0] if ta else a.info.shape[1]
    sam, sak = (1, m) if ta else (k, 1)
    sbk, sbn = (1, k) if tb else (n, 1)
    scm = scn = 0
    if c is not None:
        _, (sc,) = broadcast_plan((m, n), c.info.shape)
        full = [0, 0]
        padded = (1,) * (2 - len(c.info.shape)) + tuple(c.info.shape)
        cs = contiguous_strides(padded)
        full = [0 if d == 1 else s for d, s in zip(padded, cs)]
        scm, scn = full
    params = [
        y.info.size,
        m,
        n,
        k,
        0,
        [1] * 4,
        [0] * 4,
        [0] * 4,
        element(a),
        element(b),
        sam,
        sak,
        sbk,
        sbn,
        element(c) if c is not None else -1,
        scm,
        scn,
        float(attrs.get("alpha", 1.0)),
        float(attrs.get("beta", 1.0)),
        element(y),
        activation_code(attrs),
    ]
    _record_product(rec, params, [a, b, c], y, k)


register("MatMul", _record_matmul, _matmul_supports, efficiency=0.4)
register("Gemm", _record_gemm, _gemm_supports, efficiency=0.4)

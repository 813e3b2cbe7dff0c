"""MatMul (numpy semantics: 1-D operands, broadcast batch dims), Gemm (transposes, alpha, beta,
broadcast bias) and opencl.FusedMatMul (fuse.py: a MatMul with the Transposes before it and its scale,
bias row and activation after it), activation fused.

On a GPU every product runs on a register-tiled kernel of kernels/gemm.cl (mnn-vulkan's gemm.comp:
blocks staged through local memory), the tiling chosen by the work-groups it gives; on a CPU device
on matmul.cl's direct kernel (4x4 outputs per work-item, no barriers). Transposes (Gemm's and fused
ones) and 1-D operands become strides; batch broadcasting becomes a small table of per-batch operand
offsets, uploaded at resize, and a B shared by every batch folds A's batch into rows. A Gemm of a few
rows (a classifier at batch 1) runs one work-group per output column over B stored N x K
(matvec_nk); a constant B is transposed once at resize into whichever layout makes the loads
coalesce."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.tiling import blocks, busiest_tile

from . import blocks8
from ._cl import LocalMem
from ._common import (
    T,
    broadcast_strides,
    collapse,
    contiguous_strides,
    full_attrs,
    fused_activation,
    int8,
    kernel,
    numel,
)

#: a MatMul with Transposes before it and a scale, a bias row and an activation after it, run as one
#: (fuse.py)
FUSED_MATMUL = "opencl.FusedMatMul"
MATVEC_ROWS = 4  # up to this many rows, a Gemm reads B row by row (matvec_nk)
MATVEC_LWS = 64


def _operand(shape, strides, perm) -> tuple[tuple, tuple]:
    """(shape, element strides) of a MatMul operand stored with `strides`, read through a Transpose
    by `perm` (empty: as stored)."""
    shape, strides = tuple(int(d) for d in shape), tuple(int(s) for s in strides)
    if perm:
        shape, strides = tuple(shape[p] for p in perm), tuple(strides[p] for p in perm)
    return shape, strides


def _batch_offsets(out_batch, *operands) -> np.ndarray:
    """[(offset of A, of B, of Y)] per output batch index, in elements: each operand's batch dims
    (batch, strides) broadcast over `out_batch` as numpy does."""
    count = numel(out_batch)
    if count == 0:
        return np.zeros((1, 3), np.int32)
    idx = np.indices(out_batch).reshape(len(out_batch), -1) if out_batch else np.zeros((0, 1), np.int64)
    offs = np.zeros((count, 3), np.int64)
    for col, (batch, strides) in enumerate(operands):
        pad = len(out_batch) - len(batch)
        for d in range(len(batch)):
            if batch[d] != 1:
                offs[:, col] += idx[pad + d] * strides[d]
    return offs.astype(np.int32)


def _bias_args(b, bias, y, bias_strides):
    return [b.tensor(bias), 1, *bias_strides] if bias is not None else [b.tensor(y), 0, 0, 0]


#: the register-tiled kernels of kernels/gemm.cl, gemm_<name>: (local size, (TM, TN, BK)) as
#: mnn-vulkan's tilings (mnn_core.backend.kit.tiling): TX x TY work-items of TM x TN outputs each
GEMM_TILINGS = {
    "big": ((16, 16, 1), (4, 4, 16)),
    "wide": ((16, 16, 1), (2, 4, 16)),
    "mid": ((16, 16, 1), (2, 2, 16)),
    "one": ((16, 16, 1), (1, 1, 16)),
}
GEMM_OPTION = "opencl.gemm"  # a name of GEMM_TILINGS, or "direct" (matmul.cl's kernel): forces one
#: a GPU's tilings, largest block first, and the work-groups the first taken must give
#: (mnn-vulkan's for its GEMMs: 32x64, then 32x32, then 16x16 blocks)
GPU_ORDER = ("wide", "mid", "one")
GPU_ENOUGH = 180


def gemm_kernel(b, m: int, n: int, batches: int) -> str:
    """The kernel of an M x N product `batches` times: 8x8 register blocks (blocks8.choose: on a GPU
    where they fill it), else on a GPU the tiling of the largest block that still gives every compute
    unit work; on a CPU device "direct" (PoCL runs the tiled kernels' 256 work-items between barriers
    one by one, their tiles spilled: several times slower there)."""
    forced = b.options.get(GEMM_OPTION)
    if forced:
        if forced != "direct" and forced not in GEMM_TILINGS:
            raise ValueError(f"{GEMM_OPTION} must be direct or one of {', '.join(GEMM_TILINGS)}, got {forced!r}")
        return forced
    big = blocks8.choose(b, m, n, batches)
    if big is not None:
        return big
    if not b.runtime.is_gpu:
        return "direct"
    local, spec, _ = busiest_tile(m, n, batches, (GEMM_TILINGS[t] for t in GPU_ORDER), GPU_ENOUGH)
    return next(t for t in GPU_ORDER if GEMM_TILINGS[t] == (local, spec))


def _tiled(b, a: T, bm: T, y, offs, batches, m, n, k, y_sm, a_strides, b_strides, bias_args, alpha, beta, act):
    """y[z] = act(alpha * A[z] @ B[z] + beta * C) on the kernel gemm_kernel picks."""
    if batches * m * n == 0:
        return
    name = gemm_kernel(b, m, n, batches)
    head = [a, bm, b.tensor(y), b.upload(offs), batches, m, n, k, y_sm, *a_strides, *b_strides, *bias_args]
    if name == "direct":
        b.launch("matmul", [*head, float(alpha), float(beta), *act], (-(-n // 4), -(-m // 4), batches))
        return
    if name in blocks8.BLOCKS:
        _gemm8(b, name, head, y, batches, m, n, k, y_sm, bias_args, alpha, beta, act)
        return
    local, spec = GEMM_TILINGS[name]
    (tx, ty, _), (bmk, bnk) = local, blocks(local, spec)
    b.launch(
        f"gemm_{name}",
        [*head, float(alpha), float(beta), *act],
        (-(-n // bnk) * tx, -(-m // bmk) * ty, batches),
        (tx, ty, 1),
        tunable=False,
    )


def _gemm8(b, name, head, y, batches, m, n, k, y_sm, bias_args, alpha, beta, act):
    """gemm8_<name> (kernels/gemm8.cl) over the product; split along K where blocks8.gemm_slices says,
    its partial sums added up by gemm8_splitk_reduce with alpha, beta * C and the activation."""
    (tx, ty, _), (bmk, bnk) = blocks8.BLOCKS[name]
    slices = blocks8.gemm_slices(b, name, m, n, k) if batches == 1 else 1
    ks = -(-k // slices) if k else 0
    slices = -(-k // ks) if ks else 1  # no empty slice: each one writes its whole part
    part = b.scratch(slices * m * n * 4) if slices > 1 else b.tensor(y)
    params = [float(alpha), float(beta), *act, slices, ks if slices > 1 else k, part]
    grid = (-(-n // bnk) * tx, -(-m // bmk) * ty, slices if slices > 1 else batches)
    b.launch(f"gemm8_{name}", [*head, *params], grid, (tx, ty, 1), tunable=False)
    if slices > 1:
        args = [part, slices, m, n, b.tensor(y), y_sm, *bias_args, float(alpha), float(beta), *act]
        b.launch("gemm8_splitk_reduce", args, (m * n,))


def _transposed_copy(b, src: T, rows: int, cols: int) -> T:
    """A private cols x rows copy of a constant rows x cols matrix, made once at resize."""
    dst = b.scratch(rows * cols * 4)
    shape, (ss, ds) = collapse((cols, rows), (1, cols), (rows, 1))
    b.launch(
        "copy_strided",
        [src, dst, rows * cols, len(shape), int8(shape), int8(ss), int8(ds)],
        (rows * cols,),
        once=True,
        tunable=False,
    )
    return dst


def _matmul(op, b, perms=((), (), ()), alpha: float = 1.0, row=None, bmat=None):
    """MatMul (numpy semantics) of its operands read through Transposes by perms[0] and perms[1],
    times `alpha`, plus a bias row of N values (`row`), then the node's activation, written through
    a Transpose by perms[2] (its last axis kept last). `bmat`: B's data in place of its tensor (same
    shape and layout)."""
    a, bm = op.inputs[:2]
    y = op.outputs[0]
    sa, ta = _operand(a.info.shape, contiguous_strides(a.info.shape), perms[0])
    sb, tb = _operand(bm.info.shape, contiguous_strides(bm.info.shape), perms[1])
    if len(sa) == 1:  # a row
        sa, ta = (1,) + sa, (0,) + ta
    if len(sb) == 1:  # a column
        sb, tb = sb + (1,), tb + (0,)
    m, k = sa[-2:]
    n = sb[-1]
    out_batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    # the product's strides in Y: contiguous, or the Transpose's (Y = transpose(product, perm))
    ys = contiguous_strides(y.info.shape)
    zs = [ys[list(perms[2]).index(d)] for d in range(len(ys))] if perms[2] else contiguous_strides(out_batch + (m, n))
    batches = numel(out_batch)
    if numel(sb[:-2]) == 1 and not perms[0] and not perms[2]:  # one B for every batch (a Linear layer)
        m, batches, offs = m * batches, 1, np.zeros((1, 3), np.int32)  # A's batch is more rows
    else:
        offs = _batch_offsets(out_batch, (sa[:-2], ta[:-2]), (sb[:-2], tb[:-2]), (out_batch, zs[:-2]))
    act = fused_activation(op.node.attrs)
    bias_args = [row, 1, 0, 1] if row is not None else _bias_args(b, None, y, None)  # the row as C, every row alike
    a_strides, b_strides = (ta[-2], ta[-1]), (tb[-2], tb[-1])
    _tiled(
        b,
        b.tensor(a),
        b.tensor(bm) if bmat is None else bmat,
        y,
        offs,
        batches,
        m,
        n,
        k,
        zs[-2],
        a_strides,
        b_strides,
        bias_args,
        alpha,
        1.0,
        act,
    )


@kernel("MatMul")
def _build_matmul(op, b):
    _matmul(op, b)


@kernel(FUSED_MATMUL)
def _build_fused_matmul(op, b):
    """opencl.FusedMatMul (fuse.py): inputs A, B, then the bias row if attrs["bias"], then the scalar
    if attrs["scale"] ("Mul" or "Div"), then the constant row B's columns are scaled by if
    attrs["col_scale"] (B and the bias row then constants, scaled here once); A and B read through
    attrs["perm_a"] / ["perm_b"], the result written through attrs["perm_y"]."""
    attrs = op.node.attrs
    extra = list(op.inputs[2:])
    bias = extra.pop(0) if attrs.get("bias") else None
    row = b.tensor(bias) if bias is not None else None
    alpha = 1.0
    if attrs.get("scale"):
        value = float(np.asarray(op.constants[extra.pop(0).name]).reshape(-1)[0])
        alpha = value if attrs["scale"] == "Mul" else 1.0 / value
    bmat = None
    if attrs.get("col_scale"):
        gamma = np.asarray(op.constants[extra.pop(0).name], np.float32).reshape(-1)
        bmat = b.upload(np.asarray(op.constants[op.inputs[1].name], np.float32) * gamma)
        if bias is not None:
            row = b.upload(np.asarray(op.constants[bias.name], np.float32).reshape(-1) * gamma)
    perms = tuple(tuple(attrs.get(key, ())) for key in ("perm_a", "perm_b", "perm_y"))
    _matmul(op, b, perms, alpha, row, bmat)


def _gemm_supports(node, ins):
    if len(ins) > 2 and ins[2] is not None and len(ins[2].shape) > 2:
        return "a Gemm bias of rank above 2"
    return True


@kernel("Gemm", supports=_gemm_supports)
def _build_gemm(op, b):
    attrs = full_attrs(op.node)
    a, bm = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    m, n = y.info.shape
    ra, ca = a.info.shape
    rb, cb = bm.info.shape
    k = ra if attrs["transA"] else ca
    if m * n == 0:
        return
    a_strides = (1, ca) if attrs["transA"] else (ca, 1)  # (per row m, per k)
    b_strides = (1, cb) if attrs["transB"] else (cb, 1)  # (per k, per column n)
    bias_args = _bias_args(b, bias, y, tuple(broadcast_strides(bias.info.shape, (m, n))) if bias is not None else None)
    act = fused_activation(attrs)
    constant_b = bm.name in op.constants
    if m <= MATVEC_ROWS and not attrs["transA"] and (attrs["transB"] or constant_b):
        bt = b.tensor(bm) if attrs["transB"] else _transposed_copy(b, b.tensor(bm), k, n)
        b.launch(
            "matvec_nk",
            [
                b.tensor(a),
                ca,
                bt,
                b.tensor(y),
                m,
                n,
                k,
                *bias_args,
                float(attrs["alpha"]),
                float(attrs["beta"]),
                *act,
                LocalMem(MATVEC_LWS * 4),
            ],
            (n * MATVEC_LWS,),
            (MATVEC_LWS,),
            tunable=False,
        )
        return
    bmat = b.tensor(bm)
    if attrs["transB"] and constant_b:  # stored N x K: a K x N copy makes the tile loads coalesce
        bmat, b_strides = _transposed_copy(b, bmat, n, k), (n, 1)
    _tiled(
        b,
        b.tensor(a),
        bmat,
        y,
        np.zeros((1, 3), np.int32),
        1,
        m,
        n,
        k,
        n,
        a_strides,
        b_strides,
        bias_args,
        attrs["alpha"],
        attrs["beta"],
        act,
    )

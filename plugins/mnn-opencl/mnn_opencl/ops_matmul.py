"""MatMul (numpy semantics: 1-D operands, broadcast batch dims) and Gemm
(transposes, alpha, beta, broadcast bias), activation fused (kernels/matmul.cl).

Transposes and 1-D operands become strides; batch broadcasting becomes a small
table of per-batch operand offsets, uploaded at resize. A Gemm of a few rows
(a classifier at batch 1) runs one work-group per output column over B stored
N x K (matvec_nk); a constant B is transposed once at resize into whichever
layout makes the loads coalesce."""

from __future__ import annotations

import numpy as np

from ._cl import LocalMem
from ._common import T, broadcast_strides, collapse, full_attrs, fused_activation, int8, kernel, numel

MATVEC_ROWS = 4  # up to this many rows, a Gemm reads B row by row (matvec_nk)
MATVEC_LWS = 64


def _batch_offsets(a_batch, b_batch, out_batch, a_mat: int, b_mat: int) -> np.ndarray:
    """[(offset of A, offset of B)] per output batch index, in elements."""
    count = numel(out_batch)
    if count == 0:
        return np.zeros((1, 2), np.int32)
    idx = np.indices(out_batch).reshape(len(out_batch), -1) if out_batch else np.zeros((0, 1), np.int64)
    sa = broadcast_strides(a_batch, out_batch)
    sb = broadcast_strides(b_batch, out_batch)
    offs = np.zeros((count, 2), np.int64)
    for d in range(len(out_batch)):
        offs[:, 0] += idx[d] * sa[d] * a_mat
        offs[:, 1] += idx[d] * sb[d] * b_mat
    return offs.astype(np.int32)


def _bias_args(b, bias, y, bias_strides):
    return [b.tensor(bias), 1, *bias_strides] if bias is not None else [b.tensor(y), 0, 0, 0]


def _tiled(b, a: T, bm: T, y, offs, batches, m, n, k, a_strides, b_strides, bias_args, alpha, beta, act):
    if batches * m * n == 0:
        return
    b.launch(
        "matmul",
        [
            a,
            bm,
            b.tensor(y),
            b.upload(offs),
            batches,
            m,
            n,
            k,
            *a_strides,
            *b_strides,
            *bias_args,
            float(alpha),
            float(beta),
            *act,
        ],
        (-(-n // 4), -(-m // 4), batches),
    )


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


@kernel("MatMul")
def _build_matmul(op, b):
    a, bm = op.inputs
    y = op.outputs[0]
    sa, sb = a.info.shape, bm.info.shape
    sa2 = (1,) + tuple(sa) if len(sa) == 1 else tuple(sa)
    sb2 = tuple(sb) + (1,) if len(sb) == 1 else tuple(sb)
    m, k = sa2[-2:]
    n = sb2[-1]
    out_batch = tuple(np.broadcast_shapes(sa2[:-2], sb2[:-2]))
    offs = _batch_offsets(sa2[:-2], sb2[:-2], out_batch, m * k, k * n)
    _tiled(
        b,
        b.tensor(a),
        b.tensor(bm),
        y,
        offs,
        numel(out_batch),
        m,
        n,
        k,
        (k, 1),
        (n, 1),
        _bias_args(b, None, y, None),
        1.0,
        0.0,
        fused_activation(full_attrs(op.node)),
    )


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
        np.zeros((1, 2), np.int32),
        1,
        m,
        n,
        k,
        a_strides,
        b_strides,
        bias_args,
        attrs["alpha"],
        attrs["beta"],
        act,
    )

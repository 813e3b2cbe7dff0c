"""MatMul (numpy semantics, batch broadcast) and Gemm (transposes, alpha,
beta, broadcast C) on the packed GEMM.

A constant B (the weights) is packed once at prepare (as bf16 under precision="low"
on a CPU with AVX-512 BF16: precision.py); a runtime B is packed at each run.
MatMul with a 2-D B folds A's batch into M: one large GEMM. Bias and
activation are applied in the GEMM epilogue.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.params import gemm_fields, matmul_fields
from mnn_core.ops.helpers import broadcast_shape

from . import _x86
from ._common import kernel, static_shape
from .precision import use_bf16


def _batch_offsets(batch: tuple, out_batch: tuple, matrix: int) -> np.ndarray:
    """Element offset of each output matrix's operand in a broadcast batch."""
    idx = np.arange(int(np.prod(batch, dtype=np.int64)), dtype=np.int64).reshape(batch)
    idx = idx.reshape((1,) * (len(out_batch) - len(batch)) + batch)
    return np.ascontiguousarray(np.broadcast_to(idx, out_batch).ravel() * matrix)


@kernel("MatMul", efficiency=0.7)
def prepare_matmul(node, ins, outs, constants, ctx, isa):
    a_shape, b_shape = static_shape(ins[0]), static_shape(ins[1])
    a2 = (1,) + a_shape if len(a_shape) == 1 else a_shape
    b2 = b_shape + (1,) if len(b_shape) == 1 else b_shape
    m, k = a2[-2:]
    n = b2[-1]
    a_batch, b_batch = a2[:-2], b2[:-2]
    out_batch = broadcast_shape(a_batch, b_batch)
    p = matmul_fields(m, n, k, int(np.prod(out_batch, dtype=np.int64)), node.attrs)
    a_off = b_off = None
    if int(np.prod(b_batch, dtype=np.int64)) == 1:  # one B for all: stack A's batch into M
        p["M"], p["batch"] = m * p["batch"], 1
    else:
        a_off = _batch_offsets(a_batch, out_batch, m * k)
        b_off = _batch_offsets(b_batch, out_batch, k * n)
    b_const = constants.get(node.inputs[1])
    p["bf16"] = use_bf16(ctx, isa)  # precision="low": a constant B on bf16 (precision.py)
    return _x86.matmul(isa, ctx.threads, "x86.MatMul", p, b_const, a_off, b_off, None, -1)


@kernel("Gemm", efficiency=0.7)
def prepare_gemm(node, ins, outs, constants, ctx, isa):
    has_c = len(node.inputs) > 2 and bool(node.inputs[2])
    c_shape = static_shape(ins[2]) if has_c else None
    p = gemm_fields(node.attrs, static_shape(ins[0]), c_shape, static_shape(outs[0]))
    bias = constants.get(node.inputs[2]) if has_c else None
    p["bf16"] = use_bf16(ctx, isa)  # precision="low": a constant B on bf16 (precision.py)
    return _x86.matmul(
        isa,
        ctx.threads,
        "x86.Gemm",
        p,
        constants.get(node.inputs[1]),
        None,
        None,
        bias,
        2 if has_c and bias is None else -1,
    )

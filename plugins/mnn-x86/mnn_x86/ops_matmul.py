"""MatMul (numpy semantics, batch broadcast) and Gemm (transposes, alpha,
beta, broadcast C) on the packed GEMM.

A constant B (the weights) is packed once at prepare (as bf16 under precision="low"
on a CPU with AVX-512 BF16: precision.py); a runtime B is packed at each run.
MatMul with a 2-D B folds A's batch into M: one large GEMM. Bias and
activation are applied in the GEMM epilogue.

x86.MatMulBias (fuse.py) is a MatMul, the Add of a constant bias row of its N columns and the activation
that alone reads the sum, if any (a Linear layer on a sequence, as torch exports it): the bias and the
activation run in the GEMM's epilogue, on the tile in registers, instead of two passes over the output.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import Fusion
from mnn_core.backend.kit.epilogue import bias_row
from mnn_core.backend.kit.params import gemm_fields, matmul_fields
from mnn_core.graph.ir import Node
from mnn_core.ops.helpers import broadcast_shape

from . import _x86
from ._common import kernel, static_shape
from .precision import use_bf16


def _batch_offsets(batch: tuple, out_batch: tuple, matrix: int) -> np.ndarray:
    """Element offset of each output matrix's operand in a broadcast batch."""
    idx = np.arange(int(np.prod(batch, dtype=np.int64)), dtype=np.int64).reshape(batch)
    idx = idx.reshape((1,) * (len(out_batch) - len(batch)) + batch)
    return np.ascontiguousarray(np.broadcast_to(idx, out_batch).ravel() * matrix)


#: the op of a MatMul, the Add of a bias row and maybe an activation (bias_fusion)
MATMUL_BIAS = "x86.MatMulBias"


def bias_fusion(matmul: Node, offer, activation_attrs) -> Fusion | None:
    """x86.MatMulBias of `matmul`, the Add of a bias row that alone reads it and the activation that
    alone reads the sum (`activation_attrs` gives its fused attrs, or None: not one), or None."""
    if matmul.op != "MatMul" or matmul.attrs.get("activation", "none") != "none":
        return None
    y = offer.infos.get(matmul.outputs[0])
    add = offer.sole_reader(matmul.outputs[0])
    if y is None or not y.is_static or y.dtype != "float32" or len(y.shape) < 2 or add is None or add.op != "Add":
        return None
    if len(add.inputs) != 2 or add.inputs.count(matmul.outputs[0]) != 1:
        return None
    bias = add.inputs[1 - add.inputs.index(matmul.outputs[0])]
    if not bias_row(offer, bias, tuple(y.shape)) or tuple(offer.infos[add.outputs[0]].shape) != tuple(y.shape):
        return None
    act = offer.sole_reader(add.outputs[0])
    act_attrs = activation_attrs(act)
    group = (matmul, add, act) if act_attrs else (matmul, add)
    attrs = {**matmul.attrs, **(act_attrs or {})}
    node = Node(MATMUL_BIAS, [*matmul.inputs, bias], [group[-1].outputs[0]], attrs, "+".join(n.name for n in group))
    return Fusion(node, tuple(n.name for n in group), "bias and activation in the GEMM's epilogue")


@kernel(MATMUL_BIAS)
def prepare_matmul_bias(node, ins, outs, constants, ctx, isa):
    """x86.MatMulBias (bias_fusion): MatMul(A, B) + bias (input 2, a constant row of N), then the node's
    activation."""
    bias = np.asarray(constants[node.inputs[2]], np.float32).reshape(-1)
    return prepare_matmul(node, ins[:2], outs, constants, ctx, isa, bias)


@kernel("MatMul", efficiency=0.7)
def prepare_matmul(node, ins, outs, constants, ctx, isa, bias=None):
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
    if bias is not None:  # x86.MatMulBias: one bias value per output column
        p["bias_rs"], p["bias_cs"] = 0, 1
    return _x86.matmul(
        isa, ctx.threads, node.op if bias is not None else "x86.MatMul", p, b_const, a_off, b_off, bias, -1
    )


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

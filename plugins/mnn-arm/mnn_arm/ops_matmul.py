"""MatMul (B 2-D: A's batch folds into M) and Gemm (transposes, alpha, beta,
broadcast C) on a float path's packed GEMM; constant B is packed at prepare."""

from __future__ import annotations

from . import _arm, half, paths
from ._common import fused_activation, kernel, prod, static_shape


def _matmul_supports(node, ins):
    if len(ins[1].shape) != 2 or len(ins[0].shape) < 1:
        return "only a 2-D B (a batch of B is not supported)"
    return True


def _float_path(ctx, runtime_bias: bool) -> str:
    """fp16h when the tensors are fp16 (a runtime bias is not: such an op is widened instead)."""
    if half.half_activations(ctx) and not runtime_bias:
        return "fp16h"
    return paths.float_path(ctx.precision, ctx.options)


def _finish(execution, path, ins, outs, ctx):
    return half.widen(execution, ins, outs) if half.half_activations(ctx) and path != "fp16h" else execution


@kernel("MatMul", half_native=True, supports=_matmul_supports, efficiency=0.7)
def prepare_matmul(node, ins, outs, constants, ctx):
    a_shape, b_shape = static_shape(ins[0]), static_shape(ins[1])
    k, n = b_shape
    m = prod(a_shape[:-1]) if len(a_shape) > 1 else 1
    act, act_alpha, act_beta = fused_activation(node.attrs)
    p = dict(M=m, N=n, K=k, batch=1, a_rs=k, a_cs=1, b_rs=n, b_cs=1, bias_rs=0, bias_cs=0, alpha=1.0, beta=1.0,
             act=act, act_alpha=act_alpha, act_beta=act_beta)
    path = _float_path(ctx, False)
    return _arm.matmul(path, "arm.MatMul", p, constants.get(node.inputs[1]), None, -1)


def _bias_strides(shape: tuple) -> tuple[int, int]:
    r, c = ((1, 1) + shape)[-2:]
    return (0 if r == 1 else c), (0 if c == 1 else 1)


@kernel("Gemm", half_native=True, efficiency=0.7)
def prepare_gemm(node, ins, outs, constants, ctx):
    attrs = node.attrs
    a_shape, b_shape = static_shape(ins[0]), static_shape(ins[1])
    m, k = a_shape[::-1] if attrs["transA"] else a_shape
    n = b_shape[0] if attrs["transB"] else b_shape[1]
    act, act_alpha, act_beta = fused_activation(attrs)
    a_rs, a_cs = (1, m) if attrs["transA"] else (k, 1)
    b_rs, b_cs = (1, k) if attrs["transB"] else (n, 1)
    has_c = len(node.inputs) > 2 and bool(node.inputs[2])
    bias_rs, bias_cs = _bias_strides(static_shape(ins[2])) if has_c else (0, 0)
    p = dict(M=m, N=n, K=k, batch=1, a_rs=a_rs, a_cs=a_cs, b_rs=b_rs, b_cs=b_cs, bias_rs=bias_rs, bias_cs=bias_cs,
             alpha=attrs["alpha"], beta=attrs["beta"], act=act, act_alpha=act_alpha, act_beta=act_beta)
    bias = constants.get(node.inputs[2]) if has_c else None
    path = _float_path(ctx, has_c and bias is None)
    execution = _arm.matmul(path, "arm.Gemm", p, constants.get(node.inputs[1]), bias, 2 if has_c and bias is None else -1)
    return _finish(execution, path, ins, outs, ctx)

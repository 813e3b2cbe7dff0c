"""The Gemm of a training step on x86 (fully connected layers, their gradients).

In a compiled training step B (the weights, or an activation in a gradient
Gemm) is a graph input that changes every run, so the inference path packs
both operands at every call. This path reads them where they lie (csrc/
grad_impl.h gemm_rt): with transB every output is a dot product of two
contiguous rows; otherwise a register-tile GEMM broadcasts A (any strides, so
transA is free) and streams B's rows.

It takes Gemm nodes whose B is not a constant, with alpha = beta = 1, C absent
or a bias over the N outputs, and a fused activation of none or ReLU (and, with
transB, A not transposed); every other Gemm goes to the inference kernel.
"""

from __future__ import annotations

from mnn_core.backend import KernelSpec

from . import _x86, ops_matmul  # noqa: F401  (ops_matmul registers the Gemm this path falls back to)
from ._common import KERNELS, register, static_shape

_general = KERNELS["Gemm"]


def _runtime_path(node, ins, constants) -> bool:
    a = node.attrs
    if node.inputs[1] in constants or a.get("activation", "none") not in ("none", "relu"):
        return False
    if float(a.get("alpha", 1.0)) != 1.0 or len(ins[0].shape) != 2 or len(ins[1].shape) != 2:
        return False
    if a.get("transB") and a.get("transA"):
        return False
    if len(node.inputs) > 2 and node.inputs[2]:
        n = static_shape(ins[1])[0 if a.get("transB") else 1]
        if float(a.get("beta", 1.0)) != 1.0 or static_shape(ins[2]) not in ((n,), (1, n)):
            return False
    return True


def prepare_gemm(node, ins, outs, constants, ctx, isa):
    if not _runtime_path(node, ins, constants):
        return _general.impl(node, ins, outs, constants, ctx, isa)
    a = node.attrs
    a_shape, b_shape = static_shape(ins[0]), static_shape(ins[1])
    m, k = a_shape[::-1] if a.get("transA") else a_shape
    n = b_shape[0] if a.get("transB") else b_shape[1]
    ars, acs = (1, m) if a.get("transA") else (k, 1)
    relu = a.get("activation", "none") == "relu"
    return _x86.gemm_rt(isa, ctx.threads, "x86.Gemm.runtime", m, n, k, ars, acs, bool(a.get("transB")), relu)


register(KernelSpec("Gemm", supports=_general.spec.supports, efficiency=_general.spec.efficiency), prepare_gemm)

"""The forward Conv of a training step on x86.

In a compiled training step the weights are graph inputs that change every
step, so the inference path's packing of constant weights buys nothing; what
the small convolutions of such models (LeNet: 1->6 and 6->16 channels, 5x5)
pay for instead is building packed im2col panels. This path builds plain
im2col rows per image and multiplies them by the unpacked weights with the
row-major register-tile GEMM of csrc/grad_impl.h (bias and ReLU fused).

It takes over the Conv kernel for nodes whose weights are not constants
(training), whose activation is none or ReLU and which are not depthwise, and for
constant-weight ones that ops_conv.prefers_row_gemm gives it (the direct kernel's
tile mostly empty: LeNet's 5x5s); everything else goes to the inference kernel
(ops_conv.py) unchanged.
"""

from __future__ import annotations

from mnn_core.backend import KernelSpec

from . import _x86, ops_conv  # (ops_conv also registers the inference Conv this path falls back to)
from ._common import KERNELS, register, static_shape
from .ops_grad import _conv_params

_inference = KERNELS["Conv"]


def _train_path(node, ins, constants) -> bool:
    if node.inputs[1] in constants or node.attrs.get("activation", "none") not in ("none", "relu"):
        return False
    if len(ins[0].shape) != 4 or len(ins[1].shape) != 4:
        return False
    x, w = static_shape(ins[0]), static_shape(ins[1])
    depthwise = int(node.attrs.get("group", 1)) == x[1] == w[0] and x[1] > 1
    return not depthwise


def prepare_conv(node, ins, outs, constants, ctx, isa):
    rows = node.inputs[1] in constants and ops_conv.prefers_row_gemm(node, ins, constants, ctx, isa)
    if not rows and not _train_path(node, ins, constants):
        return _inference.impl(node, ins, outs, constants, ctx, isa)
    x, w = static_shape(ins[0]), static_shape(ins[1])
    p = _conv_params(x, w, {**node.attrs, "kernel_shape": node.attrs.get("kernel_shape") or list(w[2:])})
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    if not rows and has_bias and node.inputs[2] in constants:  # with graph weights: rare, left to the GEMM path
        return _inference.impl(node, ins, outs, constants, ctx, isa)
    relu = node.attrs.get("activation", "none") == "relu"
    return _x86.conv_grad(isa, ctx.threads, "x86.Conv.rows" if rows else "x86.Conv.train", 2, p, relu)


register(KernelSpec("Conv", supports=_inference.spec.supports, efficiency=_inference.spec.efficiency), prepare_conv)

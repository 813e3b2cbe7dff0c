"""Training ops on x86: the backward ops of a compiled training step and the
fused optimizer updates (C kernels in csrc/grad_impl.h, run by csrc/op_grad.c).

ConvGradWeight and ConvGradInput take any geometry the forward Conv takes
(groups, strides, dilations, pads); MaxPoolGrad any pooling window (pads,
dilations, ceil_mode); SumToShape any broadcast it undoes; the cross-entropy
pair class-index (int64/int32, ignore_index) or soft float targets with label
smoothing and every reduction. Each is checked against the reference backend
by the conformance suite (tests/test_conformance.py) and tests/test_grad.py.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import KernelSpec
from mnn_core.backend.kit.geometry import conv_geometry
from mnn_core.ops.conv_grad import pool_grad_geometry

from . import _x86
from ._common import conv_params, pool_params, register, static_shape

MAX_DIMS = 8


def _four_d(*which):
    def supports(node, ins):
        for i in which:
            if len(ins[i].shape) != 4:
                return "only 2-D convolution/pooling (NCHW, 4-D tensors)"
        return True

    return supports


def _conv_params(x_shape, w_shape, attrs) -> dict:
    geo = conv_geometry(x_shape, w_shape, {"auto_pad": "NOTSET", **attrs})  # the grads have no auto_pad
    return conv_params(x_shape, w_shape, geo)


def _prepare_conv_grad_weight(node, ins, outs, constants, ctx, isa):
    dy, x = static_shape(ins[0]), static_shape(ins[1])
    w_shape = (dy[1], x[1] // node.attrs["group"], *node.attrs["kernel_shape"])
    return _x86.conv_grad(isa, ctx.threads, "x86.ConvGradWeight", 0, _conv_params(x, w_shape, node.attrs))


def _prepare_conv_grad_input(node, ins, outs, constants, ctx, isa):
    x = tuple(int(d) for d in node.attrs["input_shape"])
    return _x86.conv_grad(isa, ctx.threads, "x86.ConvGradInput", 1, _conv_params(x, static_shape(ins[1]), node.attrs))


register(KernelSpec("ConvGradWeight", supports=_four_d(0, 1), efficiency=0.5), _prepare_conv_grad_weight)
register(KernelSpec("ConvGradInput", supports=_four_d(0, 1), efficiency=0.5), _prepare_conv_grad_input)


def _prepare_max_pool_grad(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[1])
    geo = pool_grad_geometry(x, node.attrs)
    n, c = x[:2]
    p = pool_params(x, geo)
    return _x86.max_pool_grad(isa, ctx.threads, "x86.MaxPoolGrad", n * c, p)


register(KernelSpec("MaxPoolGrad", supports=_four_d(0, 1), efficiency=0.3), _prepare_max_pool_grad)
register(
    KernelSpec("ReluGrad", inplace=True, efficiency=0.5),
    lambda node, ins, outs, constants, ctx, isa: _x86.relu_grad(isa, ctx.threads, "x86.ReluGrad"),
)


def collapse_sum_to(src: tuple, dst: tuple):
    """(dims, y strides) of summing src down to dst: size-1 axes of src dropped,
    neighbours of the same kind (kept or summed) merged; summed axes have stride 0."""
    nd = len(src)
    target = (1,) * (nd - len(dst)) + tuple(dst)
    ystr, acc = [0] * nd, 1
    for i in reversed(range(nd)):
        ystr[i] = acc
        acc *= target[i]
    dims, strides, kinds = [], [], []
    for i, d in enumerate(src):
        if d == 1:
            continue
        kept = target[i] == d
        if kinds and kinds[-1] == kept:
            dims[-1] *= d
            strides[-1] = ystr[i] if kept else 0
            continue
        dims.append(d)
        strides.append(ystr[i] if kept else 0)
        kinds.append(kept)
    if not dims:
        return [1], [1]
    return dims, strides


def _sum_to_supports(node, ins):
    dims, _ = collapse_sum_to(static_shape(ins[0]), tuple(node.attrs["shape"]))
    return True if len(dims) <= MAX_DIMS else f"needs more than {MAX_DIMS} dims after collapsing"


def _prepare_sum_to(node, ins, outs, constants, ctx, isa):
    dims, strides = collapse_sum_to(static_shape(ins[0]), tuple(node.attrs["shape"]))
    ysize = int(np.prod(static_shape(outs[0]), dtype=np.int64))
    return _x86.sum_to(isa, ctx.threads, "x86.SumToShape", ysize, dims, strides)


register(KernelSpec("SumToShape", supports=_sum_to_supports, efficiency=0.5), _prepare_sum_to)

#: enum x86_target_kind / x86_reduction in csrc/x86_grad.h
TARGET_KINDS = {"int64": 0, "int32": 1, "float32": 2}
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _ce_supports(first):
    def supports(node, ins):
        logits, target = ins[first], ins[first + 1]
        if logits.dtype != "float32":
            return "float32 logits only"
        if target.dtype not in TARGET_KINDS:
            return f"targets of dtype {target.dtype} (x86 takes {'/'.join(TARGET_KINDS)})"
        if len(logits.shape) < 2:
            return "logits need a class axis (at least 2-D)"
        return True

    return supports


def _prepare_ce(grad: bool):
    def prepare(node, ins, outs, constants, ctx, isa):
        first = 1 if grad else 0
        shape, a = static_shape(ins[first]), node.attrs
        inner = int(np.prod(shape[2:], dtype=np.int64))
        return _x86.softmax_ce(
            isa,
            ctx.threads,
            f"x86.{node.op}",
            grad,
            shape[0],
            shape[1],
            inner,
            TARGET_KINDS[ins[first + 1].dtype],
            REDUCTIONS[a.get("reduction", "mean")],
            int(a.get("ignore_index", -100)),
            float(a.get("label_smoothing", 0.0)),
        )

    return prepare


_CE_DTYPES = ("float32", "int64", "int32")
register(
    KernelSpec("SoftmaxCrossEntropy", dtypes=_CE_DTYPES, supports=_ce_supports(0), efficiency=0.3), _prepare_ce(False)
)
register(
    KernelSpec("SoftmaxCrossEntropyGrad", dtypes=_CE_DTYPES, supports=_ce_supports(1), efficiency=0.3),
    _prepare_ce(True),
)

#: enum x86_optim_kind in csrc/ops_grad.h
OPTIM_KINDS = {"SGDUpdate": 0, "SGDMomentumUpdate": 1, "AdamUpdate": 2}


def _prepare_optim(node, ins, outs, constants, ctx, isa):
    return _x86.optim_update(isa, ctx.threads, f"x86.{node.op}", OPTIM_KINDS[node.op], dict(node.attrs))


for _op in OPTIM_KINDS:
    register(KernelSpec(_op, inplace=True, efficiency=0.5), _prepare_optim)

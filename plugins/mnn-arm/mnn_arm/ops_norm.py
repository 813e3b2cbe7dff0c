"""BatchNormalization (inference: one per-channel multiply-add folded at
prepare in float64), Softmax / LogSoftmax (and arm.ScaledSoftmax, fuse.py), LayerNormalization and
InstanceNormalization (rows normalized, then scaled and shifted)."""

from __future__ import annotations

import numpy as np

from mnn_core.ops.helpers import normalize_axis

from . import _arm, half
from ._common import kernel, prod, static_shape
from .fuse import SCALED_SOFTMAX


def _bn_supports(node, ins):
    return True if len(ins[0].shape) >= 2 else "needs a channel axis"


@kernel("BatchNormalization", supports=_bn_supports, inplace=True, efficiency=0.3)
def prepare_batchnorm(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    params = [constants.get(name) for name in node.inputs[1:5]]
    if any(p is None for p in params):  # parameters that arrive at run: folded per run
        return _arm.batchnorm_runtime(
            "arm.BatchNormalization (runtime parameters)", x[0], x[1], prod(x[2:]), float(node.attrs["epsilon"])
        )
    gamma, beta, mean, var = (np.asarray(p, np.float64) for p in params)
    scale = gamma / np.sqrt(var + float(node.attrs["epsilon"]))
    return _arm.affine("arm.BatchNormalization", x[0], x[1], prod(x[2:]), scale, beta - mean * scale)


def _softmax(node, ins, log, ctx):
    x = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(x), node.op)
    dims = (prod(x[:axis]), x[axis], prod(x[axis + 1 :]))
    if half.half_activations(ctx):  # fp16 in and out: fp16h.c's kernel
        return _arm.softmax_h(f"arm.{node.op}", *dims, log)
    return _arm.softmax(f"arm.{node.op}", *dims, log)


@kernel("Softmax", half_native=True, efficiency=0.3)
def prepare_softmax(node, ins, outs, constants, ctx):
    return _softmax(node, ins, False, ctx)


@kernel("LogSoftmax", half_native=True, efficiency=0.3)
def prepare_logsoftmax(node, ins, outs, constants, ctx):
    return _softmax(node, ins, True, ctx)


@kernel(SCALED_SOFTMAX)
def prepare_scaled_softmax(node, ins, outs, constants, ctx):
    """Softmax over the last axis of x * s (attrs scale_op "Mul") or x / s ("Div"), s a constant scalar (fuse.py)."""
    x = static_shape(ins[0])
    s = float(np.asarray(constants[node.inputs[1]], np.float32).reshape(()))
    scale = s if node.attrs["scale_op"] == "Mul" else float(np.float32(1.0) / np.float32(s))
    return _arm.softmax(SCALED_SOFTMAX, prod(x[:-1]), x[-1], 1, False, scale)


def _optional(node, ins, i):
    return ins[i] if len(ins) > i and ins[i] is not None and len(node.inputs) > i and node.inputs[i] else None


def _layernorm_supports(node, ins):
    x = ins[0].shape
    axis = normalize_axis(node.attrs["axis"], len(x), "LayerNormalization")
    for i, what in ((1, "scale"), (2, "bias")):
        p = _optional(node, ins, i)
        if p is not None and prod(p.shape) != prod(x[axis:]):
            return f"{what} broadcast to the normalized shape (only the full shape)"
    return True


@kernel("LayerNormalization", half_native=True, supports=_layernorm_supports, efficiency=0.3)
def prepare_layernorm(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(x), node.op)
    has = [_optional(node, ins, i) is not None for i in (1, 2)]
    scale = constants.get(node.inputs[1]) if has[0] else None
    shift = constants.get(node.inputs[2]) if has[1] else None
    return _arm.norm(
        "arm.LayerNormalization",
        prod(x[:axis]),
        prod(x[axis:]),
        0,
        float(node.attrs["epsilon"]),
        scale,
        shift,
        1 if has[0] else -1,
        (2 if has[0] else 1) if has[1] else -1,
        half.half_activations(ctx),
    )


@kernel("InstanceNormalization", half_native=True, efficiency=0.3)
def prepare_instancenorm(node, ins, outs, constants, ctx):
    x = static_shape(ins[0])
    return _arm.norm(
        "arm.InstanceNormalization",
        x[0] * x[1],
        prod(x[2:]),
        x[1],
        float(node.attrs["epsilon"]),
        constants.get(node.inputs[1]),
        constants.get(node.inputs[2]),
        1,
        2,
        half.half_activations(ctx),
    )

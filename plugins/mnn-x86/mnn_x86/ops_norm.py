"""Normalizations and softmax on x86.

BatchNormalization (inference) becomes one per-channel multiply-add: scale
and shift are folded at prepare from constant parameters (in float64), or at
each run when the graph computes them. LayerNormalization and
InstanceNormalization normalize rows (two passes), then scale and shift; a LayerNormalization
whose scale or bias broadcasts runs in _reduce (csrc/reduce/layernorm.c).
"""

from __future__ import annotations

import numpy as np

from mnn_core.ops.helpers import normalize_axis

from . import _reduce, _x86
from ._common import kernel, static_shape


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


@kernel("BatchNormalization", inplace=True, efficiency=0.3)
def prepare_batchnorm(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[0])
    c = x[1]
    eps = float(node.attrs["epsilon"])
    params = [constants.get(name) for name in node.inputs[1:5]]
    scale = shift = None
    if all(p is not None for p in params):
        gamma, beta, mean, var = (np.asarray(p, np.float64) for p in params)
        scale = gamma / np.sqrt(var + eps)
        shift = beta - mean * scale
    return _x86.affine(isa, ctx.threads, "x86.BatchNormalization", x[0], c, _prod(x[2:]), scale, shift, eps)


def _softmax(node, ins, isa, ctx, log):
    x = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(x), node.op)
    return _x86.softmax(isa, ctx.threads, f"x86.{node.op}", _prod(x[:axis]), x[axis], _prod(x[axis + 1 :]), log)


@kernel("Softmax", efficiency=0.3)
def prepare_softmax(node, ins, outs, constants, ctx, isa):
    return _softmax(node, ins, isa, ctx, False)


@kernel("LogSoftmax", efficiency=0.3)
def prepare_logsoftmax(node, ins, outs, constants, ctx, isa):
    return _softmax(node, ins, isa, ctx, True)


def _optional(node, ins, i):
    return ins[i] if len(ins) > i and ins[i] is not None and len(node.inputs) > i and node.inputs[i] else None


def _full_params(node, ins, normalized) -> bool:
    """Whether scale and bias (where given) hold the whole normalized shape, as _x86.norm takes them."""
    for i in (1, 2):
        p = _optional(node, ins, i)
        if p is not None and tuple(p.shape) != normalized and _prod(p.shape) != _prod(normalized):
            return False
    return True


def _param_strides(p, normalized) -> list[int]:
    """Element strides of a parameter broadcast to the normalized shape: 0 along the axes it repeats."""
    if p is None:
        return [0] * len(normalized)
    shape = (1,) * (len(normalized) - len(p.shape)) + tuple(p.shape)
    return [0 if shape[k] == 1 else _prod(shape[k + 1 :]) for k in range(len(shape))]


def _broadcast_layout(normalized, sstr, bstr) -> list[list[int]]:
    """[size, scale stride, bias stride] of the normalized axes, size-1 axes dropped and an axis merged
    into the one before it where both parameters walk on across them."""
    dims: list[list[int]] = []
    for d, a, b in zip(normalized, sstr, bstr):
        if d == 1:
            continue
        if dims and dims[-1][1] == a * d and dims[-1][2] == b * d:
            dims[-1] = [dims[-1][0] * d, a, b]
        else:
            dims.append([d, a, b])
    return dims or [[1, 0, 0]]


@kernel("LayerNormalization", efficiency=0.3)
def prepare_layernorm(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[0])
    axis = normalize_axis(node.attrs["axis"], len(x), node.op)
    normalized = tuple(x[axis:])
    has = [_optional(node, ins, i) is not None for i in (1, 2)]
    # absent optional inputs are not passed to the kernel, so a present bias may be input 1
    scale_input = 1 if has[0] else -1
    shift_input = (2 if has[0] else 1) if has[1] else -1
    eps = float(node.attrs["epsilon"])
    if not _full_params(node, ins, normalized):  # broadcast parameters: _reduce
        sstr, bstr = (_param_strides(_optional(node, ins, i), normalized) for i in (1, 2))
        dims = _broadcast_layout(normalized, sstr, bstr)
        return _reduce.layernorm(
            isa,
            ctx.threads,
            _prod(x[:axis]),
            _prod(normalized),
            [d[0] for d in dims],
            [d[1] for d in dims],
            [d[2] for d in dims],
            eps,
            scale_input,
            shift_input,
        )
    scale = constants.get(node.inputs[1]) if has[0] else None
    shift = constants.get(node.inputs[2]) if has[1] else None
    return _x86.norm(
        isa,
        ctx.threads,
        "x86.LayerNormalization",
        _prod(x[:axis]),
        _prod(normalized),
        0,
        eps,
        scale,
        shift,
        scale_input,
        shift_input,
    )


@kernel("InstanceNormalization", efficiency=0.3)
def prepare_instancenorm(node, ins, outs, constants, ctx, isa):
    x = static_shape(ins[0])
    scale, shift = constants.get(node.inputs[1]), constants.get(node.inputs[2])
    return _x86.norm(
        isa,
        ctx.threads,
        "x86.InstanceNormalization",
        x[0] * x[1],
        _prod(x[2:]),
        x[1],
        float(node.attrs["epsilon"]),
        scale,
        shift,
        1,
        2,
    )

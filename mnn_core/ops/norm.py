"""Normalizations (batch, layer, instance) and Softmax / LogSoftmax."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ._util import broadcast_shape, normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register

_FLOAT = ("float32", "float16", "bfloat16")  # bfloat16: the reference computes it widened


def _need_float(op, x):
    if x.dtype not in _FLOAT:
        raise GraphError(f"{op} takes {' or '.join(_FLOAT)} input, got {x.dtype}")


def _per_channel(op, x, params, names):
    """Check that each parameter is a vector of x's channel count (axis 1)."""
    if len(x.shape) < 2:
        raise GraphError(f"{op} takes input of rank 2 or more (N, C, ...), got shape {x.shape}")
    c = x.shape[1]
    for name, p in zip(names, params):
        if p is None:
            raise GraphError(f"{op}: input {name!r} is required")
        if p.shape != (c,):
            raise GraphError(f"{op}: {name} must have shape ({c},) for input {x.shape}, got {p.shape}")


def _channel_view(p, rank):
    return p.astype(np.float64).reshape((1, -1) + (1,) * (rank - 2))


# -- BatchNormalization (inference) ------------------------------------------------


def _bn_infer(ins, attrs):
    x = ins[0]
    _need_float("BatchNormalization", x)
    _per_channel("BatchNormalization", x, ins[1:], ("scale", "B", "mean", "var"))
    return [x]


def _bn_reference(ins, attrs):
    x, scale, bias, mean, var = ins
    r = x.ndim
    k = _channel_view(scale, r) / np.sqrt(_channel_view(var, r) + attrs["epsilon"])
    y = (x.astype(np.float64) - _channel_view(mean, r)) * k + _channel_view(bias, r)
    return [y.astype(x.dtype)]


def _bn_samples(rng):
    for shape in [(2, 3, 5, 5), (1, 16, 7, 3), (4, 6), (2, 5, 9), (0, 3, 2, 2)]:
        c = shape[1]
        params = [rand(rng, c, low=0.5, high=1.5), rand(rng, c), rand(rng, c), rand(rng, c, low=0.1, high=2.0)]
        yield Sample([rand(rng, *shape)] + params, label=str(shape))
    c = 4
    params = [rand(rng, c), rand(rng, c), rand(rng, c), rand(rng, c, low=0.0, high=0.01)]
    yield Sample([rand(rng, 1, c, 3, 3)] + params, {"epsilon": 1e-2}, label="epsilon 1e-2, tiny variance")
    for shape in [(2, 3, 3, 5, 7), (3, 5, 1)]:  # 3 spatial axes; one of size 1
        c = shape[1]
        params = [rand(rng, c, low=0.5, high=1.5), rand(rng, c), rand(rng, c), rand(rng, c, low=0.1, high=2.0)]
        yield Sample([rand(rng, *shape)] + params, label=str(shape))


register(
    OpSchema(
        "BatchNormalization",
        infer=_bn_infer,
        reference=_bn_reference,
        attrs={
            "epsilon": Attr("float", 1e-5),
            "momentum": Attr("float", 0.9, doc="training only; unused at inference"),
            "training_mode": Attr("int", 0, (0,), "only the inference form is an op; training uses autograd"),
        },
        n_inputs=(5, 5),
        flops=lambda ins, outs, attrs: 2.0 * outs[0].size,
        samples=_bn_samples,
        inplace=True,  # each output element reads only the same input element
        doc="(x - mean) / sqrt(var + epsilon) * scale + B per channel (axis 1 of (N, C, D1, ...), rank 2 or "
        "more), inference form.",
    )
)


# -- LayerNormalization -------------------------------------------------------------


def _ln_infer(ins, attrs):
    x = ins[0]
    _need_float("LayerNormalization", x)
    if not x.shape:
        raise GraphError("LayerNormalization takes input of rank 1 or more, got a scalar")
    axis = normalize_axis(attrs["axis"], len(x.shape), "LayerNormalization")
    normalized = x.shape[axis:]
    for name, p in zip(("scale", "bias"), ins[1:]):
        if p is not None and broadcast_shape(p.shape, normalized) != normalized:
            raise GraphError(
                f"LayerNormalization: {name} of shape {p.shape} does not broadcast to the "
                f"normalized shape {normalized} (axis {attrs['axis']} of {x.shape})"
            )
    return [x]


def _ln_reference(ins, attrs):
    x = ins[0]
    scale = ins[1] if len(ins) > 1 else None
    bias = ins[2] if len(ins) > 2 else None
    axes = tuple(range(normalize_axis(attrs["axis"], x.ndim, "LayerNormalization"), x.ndim))
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes, keepdims=True) if xd.size else np.zeros_like(xd)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True) if xd.size else np.zeros_like(xd)
    y = (xd - mean) / np.sqrt(var + attrs["epsilon"])
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return [y.astype(x.dtype)]


def _ln_samples(rng):
    cases = [((4, 32), -1), ((2, 7, 10), -1), ((2, 3, 4, 5), 1), ((3, 5, 6), -2), ((0, 8), -1), ((6,), 0)]
    for shape, axis in cases:
        norm = shape[axis % len(shape) :]
        ins = [rand(rng, *shape), rand(rng, *norm, low=0.5, high=1.5), rand(rng, *norm)]
        yield Sample(ins, {"axis": axis}, label=f"{shape} axis={axis}")
    yield Sample([rand(rng, 3, 9), rand(rng, 9)], {"epsilon": 1e-3}, label="no bias")
    yield Sample([rand(rng, 2, 5, 8)], label="no scale, no bias")
    yield Sample([rand(rng, 2, 5, 8), None, rand(rng, 8)], label="bias, no scale")
    for shape, axis in [((2, 3, 3, 5, 7), 2), ((1, 2, 3, 5, 3), -4)]:
        norm = shape[axis % len(shape) :]
        ins = [rand(rng, *shape), rand(rng, *norm, low=0.5, high=1.5), rand(rng, *norm)]
        yield Sample(ins, {"axis": axis}, label=f"{shape} axis={axis}")


register(
    OpSchema(
        "LayerNormalization",
        infer=_ln_infer,
        reference=_ln_reference,
        attrs={
            "axis": Attr("int", -1, doc="first normalized axis; all axes from it on are normalized"),
            "epsilon": Attr("float", 1e-5),
            "stash_type": Attr("int", 1, (1,), "statistics are computed in float32 or wider"),
        },
        n_inputs=(1, 3),
        flops=lambda ins, outs, attrs: 8.0 * outs[0].size,
        samples=_ln_samples,
        doc="Normalize over the axes from `axis` on; optional scale and bias broadcast to those axes.",
    )
)


# -- InstanceNormalization -----------------------------------------------------------


def _in_infer(ins, attrs):
    x = ins[0]
    _need_float("InstanceNormalization", x)
    if len(x.shape) < 3:
        raise GraphError(f"InstanceNormalization takes input of rank 3 or more (N, C, D1, ...), got {x.shape}")
    _per_channel("InstanceNormalization", x, ins[1:], ("scale", "B"))
    if int(np.prod(x.shape[2:])) == 0:
        raise GraphError(f"InstanceNormalization: the spatial size of {x.shape} is empty")
    return [x]


def _in_reference(ins, attrs):
    x, scale, bias = ins
    axes = tuple(range(2, x.ndim))
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (xd - mean) / np.sqrt(var + attrs["epsilon"]) * _channel_view(scale, x.ndim) + _channel_view(bias, x.ndim)
    return [y.astype(x.dtype)]


def _in_samples(rng):
    for shape in [(2, 3, 5, 5), (1, 8, 7, 3), (3, 4, 10), (1, 2, 1, 1), (0, 3, 4, 4)]:
        c = shape[1]
        yield Sample([rand(rng, *shape), rand(rng, c, low=0.5, high=1.5), rand(rng, c)], label=str(shape))
    yield Sample([rand(rng, 1, 2, 6, 6), rand(rng, 2), rand(rng, 2)], {"epsilon": 0.1}, label="epsilon 0.1")
    for shape in [(2, 3, 3, 5, 7), (1, 4, 1, 3, 1)]:  # 3 spatial axes
        c = shape[1]
        yield Sample([rand(rng, *shape), rand(rng, c, low=0.5, high=1.5), rand(rng, c)], label=str(shape))


register(
    OpSchema(
        "InstanceNormalization",
        infer=_in_infer,
        reference=_in_reference,
        attrs={"epsilon": Attr("float", 1e-5)},
        n_inputs=(3, 3),
        flops=lambda ins, outs, attrs: 8.0 * outs[0].size,
        samples=_in_samples,
        doc="Normalize each (n, c) plane over its spatial axes, then scale and shift per channel.",
    )
)


# -- Softmax and LogSoftmax ------------------------------------------------------------


def _softmax_infer(op):
    def infer(ins, attrs):
        x = ins[0]
        _need_float(op, x)
        if not x.shape:
            raise GraphError(f"{op} takes input of rank 1 or more, got a scalar")
        normalize_axis(attrs["axis"], len(x.shape), op)
        return [x]

    return infer


def _shifted(x, axis):
    """x minus its maximum along axis (so exp never overflows), in float64."""
    xd = x.astype(np.float64)
    return xd - np.max(xd, axis=axis, keepdims=True, initial=-np.inf)


def _softmax_reference(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], x.ndim, "Softmax")
    e = np.exp(_shifted(x, axis))
    return [(e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)]


def _logsoftmax_reference(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], x.ndim, "LogSoftmax")
    s = _shifted(x, axis)
    return [(s - np.log(np.exp(s).sum(axis=axis, keepdims=True))).astype(x.dtype)]


def _softmax_samples(rng):
    cases = [
        ((3, 10), {}),
        ((2, 4, 7), {"axis": 1}),
        ((2, 3, 5, 5), {"axis": -3}),
        ((17,), {}),
        ((4, 6), {"axis": 0}),
        ((0, 5), {}),
        ((2, 1), {}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape, low=-5, high=5)], attrs, label=f"{shape} {attrs}")
    yield Sample([rand(rng, 3, 8, low=-1000, high=1000)], label="large magnitudes (stability)")


for _name, _ref in (("Softmax", _softmax_reference), ("LogSoftmax", _logsoftmax_reference)):
    register(
        OpSchema(
            _name,
            infer=_softmax_infer(_name),
            reference=_ref,
            attrs={"axis": Attr("int", -1)},
            flops=lambda ins, outs, attrs: 5.0 * outs[0].size,
            samples=_softmax_samples,
            doc=f"{_name} along one axis (default the last), computed after subtracting the maximum.",
        )
    )

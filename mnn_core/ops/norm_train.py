"""Normalization in training: batch statistics, running averages, and backward.

Inference uses BatchNormalization with running statistics (ops/norm.py).
Training normalizes with the statistics of the batch instead and updates the
running averages, as PyTorch does: the batch variance normalizes (biased), the
running variance accumulates the unbiased one. The new running values are
outputs, so a compiled training step writes them back like any other state.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand, same_dtype
from .schema import Attr, OpSchema, Sample, register


def _channel_view(v: np.ndarray, ndim: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _reduce_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _check_channels(op, x, params):
    if len(x.shape) < 2:
        raise GraphError(f"{op} takes (N, C, ...) input, got {x.shape}")
    for p in params:
        if p is not None and p.shape != (x.shape[1],):
            raise GraphError(f"{op}: per-channel inputs must have shape ({x.shape[1]},), got {p.shape}")


def _bn_train_infer(ins, attrs):
    x = ins[0]
    _check_channels("BatchNormTraining", x, ins[1:])
    dtype = same_dtype(ins, "BatchNormTraining")
    stat = TensorInfo((x.shape[1],), dtype)
    return [TensorInfo(x.shape, dtype), stat, stat, stat, stat]


def _bn_train(ins, attrs):
    x, scale, bias, running_mean, running_var = ins
    axes = _reduce_axes(x.ndim)
    count = x.size // max(x.shape[1], 1)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=axes)
    var = xd.var(axis=axes)
    invstd = 1.0 / np.sqrt(var + attrs["epsilon"])
    y = (xd - _channel_view(mean, x.ndim)) * _channel_view(invstd * scale, x.ndim) + _channel_view(bias, x.ndim)
    m = attrs["momentum"]
    unbiased = var * count / max(count - 1, 1)
    new_mean = (1 - m) * running_mean + m * mean
    new_var = (1 - m) * running_var + m * unbiased
    dt = x.dtype
    return [y.astype(dt), mean.astype(dt), var.astype(dt), new_mean.astype(dt), new_var.astype(dt)]


def _bn_samples(rng):
    for shape in [(4, 3, 5, 5), (8, 6), (2, 4, 3), (3, 2, 3, 5, 3)]:
        c = shape[1]
        yield Sample(
            [
                rand(rng, *shape, low=-2, high=3),
                rand(rng, c, low=0.5, high=1.5),
                rand(rng, c),
                rand(rng, c),
                rand(rng, c, low=0.5, high=2.0),
            ],
            {"momentum": 0.1},
            label=str(shape),
        )


register(
    OpSchema(
        "BatchNormTraining",
        infer=_bn_train_infer,
        reference=_bn_train,
        attrs={"epsilon": Attr("float", 1e-5), "momentum": Attr("float", 0.1, doc="PyTorch convention")},
        n_inputs=(5, 5),
        n_outputs=5,
        samples=_bn_samples,
        doc="(x, scale, bias, running_mean, running_var) -> (y, batch_mean, batch_var, new_running_mean, "
        "new_running_var), normalizing over all axes but 1.",
    )
)


def _bn_grad_infer(ins, attrs):
    dy, x = ins[0], ins[1]
    if dy.shape != x.shape:
        raise GraphError(f"BatchNormGrad: dy {dy.shape} and x {x.shape} differ in shape")
    _check_channels("BatchNormGrad", x, ins[2:])
    dtype = same_dtype(ins, "BatchNormGrad")
    stat = TensorInfo((x.shape[1],), dtype)
    return [TensorInfo(x.shape, dtype), stat, stat]


def _bn_grad(ins, attrs):
    dy, x, scale, mean, var = (a.astype(np.float64) for a in ins)
    nd = x.ndim
    axes = _reduce_axes(nd)
    invstd = 1.0 / np.sqrt(var + attrs["epsilon"])
    xhat = (x - _channel_view(mean, nd)) * _channel_view(invstd, nd)
    dbias = dy.sum(axis=axes)
    dscale = (dy * xhat).sum(axis=axes)
    k = _channel_view(scale * invstd, nd)
    if attrs["training"]:  # mean and var came from this batch: they depend on x too
        count = x.size / x.shape[1]
        dx = k * (dy - _channel_view(dbias / count, nd) - xhat * _channel_view(dscale / count, nd))
    else:
        dx = k * dy
    dt = ins[0].dtype
    return [dx.astype(dt), dscale.astype(dt), dbias.astype(dt)]


def _bn_grad_samples(rng):
    for shape in [(4, 3, 5, 5), (8, 6), (3, 2, 7), (2, 3, 3, 5, 3)]:
        c = shape[1]
        x = rand(rng, *shape, low=-2, high=3)
        axes = _reduce_axes(len(shape))
        for training in (1, 0):
            yield Sample(
                [
                    rand(rng, *shape),
                    x,
                    rand(rng, c, low=0.5, high=1.5),
                    x.mean(axis=axes),
                    x.var(axis=axes) + 0.1 * (1 - training),
                ],
                {"training": training},
                label=f"{shape} training={training}",
            )


register(
    OpSchema(
        "BatchNormGrad",
        infer=_bn_grad_infer,
        reference=_bn_grad,
        attrs={
            "epsilon": Attr("float", 1e-5),
            "training": Attr("int", 1, (0, 1), doc="1: mean/var are batch statistics of x"),
        },
        n_inputs=(5, 5),
        n_outputs=3,
        samples=_bn_grad_samples,
        doc="(dy, x, scale, mean, var) -> (dx, dscale, dbias) of batch normalization over all axes but 1.",
    )
)


def _ln_grad_infer(ins, attrs):
    dy, x, scale = ins
    axis = normalize_axis(attrs["axis"], len(x.shape), "LayerNormGrad")
    if dy.shape != x.shape or scale.shape != x.shape[axis:]:
        raise GraphError(f"LayerNormGrad: dy {dy.shape}, x {x.shape} and scale {scale.shape} do not match")
    dtype = same_dtype(ins, "LayerNormGrad")
    return [TensorInfo(x.shape, dtype), TensorInfo(scale.shape, dtype), TensorInfo(scale.shape, dtype)]


def _ln_grad(ins, attrs):
    dy, x, scale = (a.astype(np.float64) for a in ins)
    axis = normalize_axis(attrs["axis"], x.ndim, "LayerNormGrad")
    norm_axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=norm_axes, keepdims=True)
    invstd = 1.0 / np.sqrt(x.var(axis=norm_axes, keepdims=True) + attrs["epsilon"])
    xhat = (x - mean) * invstd
    lead = tuple(range(axis))
    dscale = (dy * xhat).sum(axis=lead)
    dbias = dy.sum(axis=lead)
    g = dy * scale
    dx = invstd * (g - g.mean(axis=norm_axes, keepdims=True) - xhat * (g * xhat).mean(axis=norm_axes, keepdims=True))
    dt = ins[0].dtype
    return [dx.astype(dt), dscale.astype(dt), dbias.astype(dt)]


def _ln_grad_samples(rng):
    for shape, axis in [((4, 10), -1), ((2, 3, 8), -1), ((2, 3, 4), 1), ((2, 3, 3, 5, 3), 2), ((7,), 0)]:
        yield Sample(
            [rand(rng, *shape), rand(rng, *shape, low=-2, high=2), rand(rng, *shape[axis:])],
            {"axis": axis},
            label=f"{shape} axis {axis}",
        )


register(
    OpSchema(
        "LayerNormGrad",
        infer=_ln_grad_infer,
        reference=_ln_grad,
        attrs={"axis": Attr("int", -1), "epsilon": Attr("float", 1e-5)},
        n_inputs=(3, 3),
        n_outputs=3,
        samples=_ln_grad_samples,
        doc="(dy, x, scale) -> (dx, dscale, dbias) of layer normalization over axes [axis, rank).",
    )
)

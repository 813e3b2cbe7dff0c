"""Functional ops PyTorch scripts reach for beyond express.functional's core set.

Like functional, each maps onto op schemas through `apply`, so it runs
eagerly, traces into a graph and differentiates through the gradient rules.
`mnn_core.nn.functional` exports these and functional's together.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ..errors import MnnError
from .functional import _axes, amax, pick_dim, sum, unsqueeze, where
from .var import Var, apply, as_var

# -- element-wise and reductions -----------------------------------------------------------------


def clamp(x, min=None, max=None):  # noqa: A002
    """Clip to [min, max]; either bound may be absent (a number; tensors bounds: use maximum/minimum)."""
    if min is None and max is None:
        raise MnnError("clamp needs min=, max= or both")
    lo = -math.inf if min is None else float(min)
    hi = math.inf if max is None else float(max)
    return apply("Clip", x, min=lo, max=hi)


clip = clamp


def masked_fill(x, mask, value):
    """x where mask is False, value where it is True (mask broadcasts)."""
    m = mask if isinstance(mask, Var) else Var(np.asarray(mask))
    if m.dtype != np.bool_:
        raise MnnError(f"masked_fill: the mask must be bool, got {m.dtype}")
    return where(m, as_var(np.asarray(value, x.dtype), x), x)


def _count(x, dim) -> int:
    axes = _axes(dim) or list(range(x.ndim))
    return int(np.prod([x.shape[a] for a in axes]))


def var(x, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None, axis=None):
    """Variance; `unbiased` (or correction=1) divides by n - 1, as PyTorch's default."""
    d = pick_dim(dim, axis, "var")
    corr = (1 if unbiased else 0) if correction is None else correction
    mu = apply("ReduceMean", x, axes=_axes(d), keepdims=1)
    dev = x - mu
    n = _count(x, d)
    return sum(dev * dev, d, keepdim) * (1.0 / builtins.max(n - corr, 1))


def std(x, dim=None, unbiased: bool = True, keepdim: bool = False, *, correction=None, axis=None):
    return apply("Sqrt", var(x, dim, unbiased, keepdim, correction=correction, axis=axis))


def norm(x, p=2, dim=None, keepdim: bool = False):
    """The p-norm over dim (all elements when None): p = 1, 2, inf or any positive number."""
    if p in (2, "fro"):
        return apply("Sqrt", sum(x * x, dim, keepdim))
    if p == 1:
        return sum(apply("Abs", x), dim, keepdim)
    if p in (math.inf, "inf"):
        return amax(apply("Abs", x), dim, keepdim)
    if not isinstance(p, (int, float)) or p <= 0:
        raise MnnError(f"norm: p must be a positive number or inf, got {p!r}")
    return sum(apply("Abs", x) ** float(p), dim, keepdim) ** (1.0 / p)


def logsumexp(x, dim, keepdim: bool = False):
    m = apply("ReduceMax", x, axes=_axes(dim), keepdims=1)
    m = Var._wrap(m.numpy()) if not m.is_lazy else m  # the shift only steadies the numbers: no gradient
    out = apply("Log", sum(apply("Exp", x - m), dim, True)) + m
    return out if keepdim else apply("Squeeze", out, axes=_axes(dim))


def one_hot(indices, num_classes: int = -1):
    """int64 (..., num_classes) with a 1 at each index."""
    idx = indices if isinstance(indices, Var) else Var(np.asarray(indices))
    if idx.dtype.kind not in "iu":
        raise MnnError(f"one_hot takes integer class indices, got {idx.dtype}")
    n = int(idx.numpy().max()) + 1 if num_classes < 0 else num_classes
    return apply("Gather", Var(np.eye(n, dtype=np.int64)), idx, axis=0)


def normalize(x, p: float = 2.0, dim: int = 1, eps: float = 1e-12):
    """x / max(||x||_p over dim, eps)."""
    n = norm(x, p, dim, keepdim=True)
    return x / apply("Max", n, as_var(np.asarray(eps, x.dtype), x))


def cosine_similarity(a, b, dim: int = 1, eps: float = 1e-8):
    num = sum(a * b, dim)
    den = apply("Max", norm(a, 2, dim) * norm(b, 2, dim), as_var(np.asarray(eps, a.dtype), a))
    return num / den


# -- convolutions over 1 and 3 spatial axes, transposed convolution --------------------------------------


def _n(v, k: int, name: str) -> list[int]:
    out = [int(v)] * k if isinstance(v, (int, np.integer)) else [int(a) for a in v]
    if len(out) != k:
        raise MnnError(f"{name} must be an int or {k} ints, got {v!r}")
    return out


def _conv_nd(x, weight, bias, stride, padding, dilation, groups, k: int, fn: str):
    if x.ndim != k + 2:
        raise MnnError(f"{fn} takes input (N, C, {', '.join('LDHW'[-k:] if k < 3 else 'DHW')}), got shape {x.shape}")
    attrs = dict(strides=_n(stride, k, "stride"), dilations=_n(dilation, k, "dilation"), group=int(groups))
    if padding == "same":
        attrs["auto_pad"] = "SAME_UPPER"
    elif padding == "valid":
        attrs["pads"] = [0] * (2 * k)
    else:
        attrs["pads"] = _n(padding, k, "padding") * 2
    return apply("Conv", x, weight, bias, **attrs)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1):
    """The adjoint of conv2d; weight (C_in, C_out / groups, kh, kw) as in PyTorch."""
    if x.ndim != 4:
        raise MnnError(f"conv_transpose2d takes input (N, C, H, W), got shape {x.shape}")
    ph, pw = _n(padding, 2, "padding")
    return apply(
        "ConvTranspose",
        x,
        weight,
        bias,
        strides=_n(stride, 2, "stride"),
        pads=[ph, pw, ph, pw],
        output_padding=_n(output_padding, 2, "output_padding"),
        group=int(groups),
        dilations=_n(dilation, 2, "dilation"),
    )


def max_pool1d(x, kernel_size, stride=None, padding=0):
    from .functional import max_pool2d

    k, s = int(kernel_size), int(kernel_size if stride is None else stride)
    return apply("Squeeze", max_pool2d(unsqueeze(x, 2), (1, k), (1, s), (0, int(padding))), axes=[2])


def avg_pool1d(x, kernel_size, stride=None, padding=0):
    from .functional import avg_pool2d

    k, s = int(kernel_size), int(kernel_size if stride is None else stride)
    return apply("Squeeze", avg_pool2d(unsqueeze(x, 2), (1, k), (1, s), (0, int(padding))), axes=[2])


def adaptive_avg_pool1d(x, output_size: int):
    if int(output_size) == 1:
        return apply("ReduceMean", x, axes=[2], keepdims=1)
    length = x.shape[2]
    if length % output_size:
        raise MnnError(f"adaptive_avg_pool1d: length {length} is not a multiple of the output {output_size}")
    return avg_pool1d(x, length // output_size)


# -- losses beyond functional's ---------------------------------------------------------------------


def binary_cross_entropy(input, target, reduction: str = "mean"):
    """-(t log p + (1 - t) log(1 - p)) of probabilities; logs clamped at -100 as PyTorch does."""
    from .functional import _reduce

    log_p = clamp(apply("Log", input), min=-100.0)
    log_q = clamp(apply("Log", 1.0 - input), min=-100.0)
    return _reduce(-(target * log_p + (1.0 - target) * log_q), reduction)


def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0):
    from .functional import _reduce

    d = apply("Abs", input - target)
    small = d < beta
    loss = where(small, d * d * (0.5 / beta), d - 0.5 * beta) if beta > 0 else d
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0):
    return smooth_l1_loss(input, target, reduction, delta) * delta


def kl_div(input, target, reduction: str = "mean", log_target: bool = False):
    """KL(target || exp(input)) with input log-probabilities, as PyTorch (reduction 'batchmean' too)."""
    from .functional import _reduce

    if log_target:
        loss = apply("Exp", target) * (target - input)
    else:
        t = target if isinstance(target, Var) else Var(np.asarray(target, input.dtype))
        safe = where(t > 0, t, 1.0)
        loss = t * (apply("Log", safe) - input)
    if reduction == "batchmean":
        return sum(loss) * (1.0 / input.shape[0])
    return _reduce(loss, reduction)


__all__ = [
    "adaptive_avg_pool1d",
    "avg_pool1d",
    "binary_cross_entropy",
    "clamp",
    "clip",
    "conv1d",
    "conv3d",
    "conv_transpose2d",
    "cosine_similarity",
    "huber_loss",
    "kl_div",
    "logsumexp",
    "masked_fill",
    "max_pool1d",
    "norm",
    "normalize",
    "one_hot",
    "smooth_l1_loss",
    "std",
    "var",
]

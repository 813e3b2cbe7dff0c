"""Functional ops with PyTorch's names and argument conventions.

    from mnn_core.express import functional as F
    y = F.relu(F.conv2d(x, w, b, padding=1))
    loss = F.cross_entropy(logits, labels)

Each function maps onto the op schemas (ONNX names and attributes) through
`apply`, so it runs eagerly, traces into a graph, and differentiates through
the schemas' gradient rules alike.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from ..errors import MnnError
from . import rng
from .var import MODE, Var, apply, as_var

# -- element-wise ------------------------------------------------------------------------


def add(a, b):
    return apply("Add", a, b)


def sub(a, b):
    return apply("Sub", a, b)


def mul(a, b):
    return apply("Mul", a, b)


def div(a, b):
    return apply("Div", a, b)


def pow(a, b):
    return apply("Pow", a, b)  # noqa: A001


def maximum(a, b):
    return apply("Max", a, b)


def minimum(a, b):
    return apply("Min", a, b)


def matmul(a, b):
    return apply("MatMul", a, b)


def where(cond, a, b):
    return apply("Where", cond, *_pair(a, b))


def exp(x):
    return apply("Exp", x)


def log(x):
    return apply("Log", x)


def sqrt(x):
    return apply("Sqrt", x)


def abs(x):
    return apply("Abs", x)  # noqa: A001


def neg(x):
    return apply("Neg", x)


def sin(x):
    return apply("Sin", x)


def cos(x):
    return apply("Cos", x)


def erf(x):
    return apply("Erf", x)


def _pair(a, b):
    """Operands of Where: numbers take the dtype of the other operand."""
    if isinstance(a, Var) and not isinstance(b, Var):
        return a, as_var(b, a)
    if isinstance(b, Var) and not isinstance(a, Var):
        return as_var(a, b), b
    return a, b


# -- activations -----------------------------------------------------------------------------


def relu(x):
    return apply("Relu", x)


def relu6(x):
    return apply("Clip", x, min=0.0, max=6.0)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    return apply("Clip", x, min=min_val, max=max_val)


def leaky_relu(x, negative_slope=0.01):
    return apply("LeakyRelu", x, alpha=negative_slope)


def sigmoid(x):
    return apply("Sigmoid", x)


def tanh(x):
    return apply("Tanh", x)


def silu(x):
    return apply("Silu", x)


def softplus(x):
    return apply("Softplus", x)


def hardswish(x):
    return apply("HardSwish", x)


def hardsigmoid(x):
    return apply("HardSigmoid", x, alpha=1.0 / 6.0, beta=0.5)


def gelu(x, approximate: str = "none"):
    if approximate != "none":
        raise MnnError("gelu: only approximate='none' (the erf form) is an op; got {approximate!r}")
    return apply("Gelu", x)


def softmax(x, dim: int | None = None, *, axis=None):
    return apply("Softmax", x, axis=pick_dim(dim, axis, "softmax", -1))


def log_softmax(x, dim: int | None = None, *, axis=None):
    return apply("LogSoftmax", x, axis=pick_dim(dim, axis, "log_softmax", -1))


# -- shape ---------------------------------------------------------------------------------


def reshape(x, shape: Sequence[int]):
    return apply("Reshape", x, shape=[int(d) for d in shape], allowzero=1)


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    nd = x.ndim
    start, end = start_dim % builtins.max(nd, 1), end_dim % builtins.max(nd, 1)
    if nd == 0:
        return reshape(x, [1])
    if end == nd - 1 and start == 1:
        return apply("Flatten", x, axis=1)
    # 0 copies a leading dim (so a symbolic batch survives), -1 takes the flattened run
    shape = [0] * start + [-1] + list(x.shape[end + 1 :])
    return apply("Reshape", x, shape=shape)


def transpose(x, perm=None):
    return apply("Transpose", x, perm=[] if perm is None else [int(p) % x.ndim for p in perm])


def squeeze(x, dim=None, *, axis=None):
    axis = pick_dim(dim, axis, "squeeze")
    axes = [] if axis is None else [axis] if isinstance(axis, int) else list(axis)
    return apply("Squeeze", x, axes=axes)


def unsqueeze(x, dim=None, *, axis=None):
    axis = pick_dim(dim, axis, "unsqueeze")
    if axis is None:
        raise MnnError("unsqueeze needs dim=, the position of the new axis")
    return apply("Unsqueeze", x, axes=[axis] if isinstance(axis, int) else list(axis))


def cat(xs: Sequence, dim: int | None = None, *, axis=None):
    return apply("Concat", *xs, axis=pick_dim(dim, axis, "cat", 0))


concat = cat


def stack(xs: Sequence, dim: int | None = None, *, axis=None):
    dim = pick_dim(dim, axis, "stack", 0)
    return cat([unsqueeze(x, dim) for x in xs], dim)


def split(x, split_size_or_sections, dim: int | None = None, *, axis=None):
    dim = pick_dim(dim, axis, "split", 0)
    size = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        n = -(-size // split_size_or_sections)
        sizes = [split_size_or_sections] * (n - 1) + [size - split_size_or_sections * (n - 1)]
    else:
        sizes = list(split_size_or_sections)
    outs = apply("Split", x, n_outputs=len(sizes), axis=dim, split=sizes)
    return (outs,) if len(sizes) == 1 else outs


def chunk(x, chunks: int, dim: int | None = None, *, axis=None):
    dim = pick_dim(dim, axis, "chunk", 0)
    return split(x, -(-x.shape[dim] // chunks), dim)


def expand(x, shape):
    return apply("Expand", x, shape=[int(d) for d in shape])


def cast(x, dtype):
    return apply("Cast", x, to=np.dtype(dtype).name)


def pad(x, pad: Sequence[int], mode: str = "constant", value: float = 0.0):
    """PyTorch order: (last_begin, last_end, second_last_begin, ...)."""
    nd = x.ndim
    begin, end = [0] * nd, [0] * nd
    for i in range(len(pad) // 2):
        begin[nd - 1 - i], end[nd - 1 - i] = pad[2 * i], pad[2 * i + 1]
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return apply("Pad", x, pads=begin + end, mode=onnx_mode, value=float(value))


def getitem(x: Var, index):
    """Basic indexing (ints, slices, None, ...) and one integer-array index."""
    if not isinstance(index, tuple):
        index = (index,)
    if builtins.sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis")
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for a Var of rank {x.ndim}")
    expanded = []
    for i in index:
        expanded += [slice(None)] * (x.ndim - used) if i is Ellipsis else [i]
    expanded += [slice(None)] * (x.ndim - builtins.sum(1 for i in expanded if i is not None))
    starts, ends, axes, steps, drop, new_axes, gathers = [], [], [], [], [], [], []
    axis = out_axis = 0
    for i in expanded:
        if i is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        dim = x.shape[axis]
        if isinstance(i, (int, np.integer)):
            k = int(i) + dim if i < 0 else int(i)
            if not 0 <= k < dim:
                raise IndexError(f"index {i} is out of range for axis {axis} of size {dim}")
            starts.append(k), ends.append(k + 1), axes.append(axis), steps.append(1), drop.append(axis)
        elif isinstance(i, slice):
            if i != slice(None):
                s, e, st = i.indices(dim)
                starts.append(s), ends.append(e if e >= 0 else -(2**62)), axes.append(axis), steps.append(st)
            out_axis += 1
        else:
            gathers.append((axis, i))
            out_axis += 1
        axis += 1
    y = apply("Slice", x, starts=starts, ends=ends, axes=axes, steps=steps) if axes else x
    for ax, idx in gathers[:1]:
        if len(gathers) > 1:
            raise IndexError("only one integer-array index is supported; index again for the next axis")
        idx = idx if isinstance(idx, Var) else Var(np.asarray(idx))
        if idx.dtype == np.bool_:
            raise IndexError("boolean masks are not supported; use where() or an index array")
        if idx.ndim != 1:
            raise IndexError("an index array must be 1-D")
        y = apply("Gather", y, idx, axis=ax)
    if drop:
        y = apply("Squeeze", y, axes=drop)
    if new_axes:
        y = apply("Unsqueeze", y, axes=new_axes)
    return y


# -- reductions ------------------------------------------------------------------------------


def _axes(axis):
    return [] if axis is None else [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]


def pick_dim(dim, axis, fn: str, default=None):
    """PyTorch's `dim=` with numpy's `axis=` as an alias; naming both is an error."""
    if dim is not None and axis is not None:
        raise MnnError(f"{fn}: give dim= or its alias axis=, not both")
    return default if dim is None and axis is None else (axis if dim is None else dim)


def _keep(keepdim, keepdims) -> int:
    return int(bool(keepdims if keepdims is not None else keepdim))


def sum(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):  # noqa: A001
    return apply("ReduceSum", x, axes=_axes(pick_dim(dim, axis, "sum")), keepdims=_keep(keepdim, keepdims))


def mean(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return apply("ReduceMean", x, axes=_axes(pick_dim(dim, axis, "mean")), keepdims=_keep(keepdim, keepdims))


def amax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return apply("ReduceMax", x, axes=_axes(pick_dim(dim, axis, "amax")), keepdims=_keep(keepdim, keepdims))


def amin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return apply("ReduceMin", x, axes=_axes(pick_dim(dim, axis, "amin")), keepdims=_keep(keepdim, keepdims))


def _arg(op: str, x, dim, keepdim, axis, keepdims):
    d = pick_dim(dim, axis, op.lower())
    if d is None:  # PyTorch: the index into the flattened tensor
        return apply(op, reshape(x, [-1]), axis=0, keepdims=0)
    return apply(op, x, axis=int(d), keepdims=_keep(keepdim, keepdims))


def argmax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """Indices of the largest values along dim (over the flattened input when dim is None, as PyTorch)."""
    return _arg("ArgMax", x, dim, keepdim, axis, keepdims)


def argmin(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    return _arg("ArgMin", x, dim, keepdim, axis, keepdims)


# -- layers ------------------------------------------------------------------------------------


def _two(v, name: str) -> list[int]:
    out = [int(v), int(v)] if isinstance(v, (int, np.integer)) else [int(a) for a in v]
    if len(out) != 2:
        raise MnnError(f"{name} must be an int or a pair, got {v!r}")
    return out


def linear(x, weight, bias=None):
    """x @ weight.T + bias, weight (out_features, in_features) as in PyTorch."""
    if x.ndim == 2:
        return apply("Gemm", x, weight, bias, transB=1)
    y = apply("MatMul", x, transpose(weight, [1, 0]))
    return y if bias is None else y + bias


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    attrs = dict(strides=_two(stride, "stride"), dilations=_two(dilation, "dilation"), group=int(groups))
    if padding == "same":
        attrs["auto_pad"] = "SAME_UPPER"
    elif padding == "valid":
        attrs["pads"] = [0, 0, 0, 0]
    else:
        ph, pw = _two(padding, "padding")
        attrs["pads"] = [ph, pw, ph, pw]
    return apply("Conv", x, weight, bias, **attrs)


def _pool_attrs(kernel_size, stride, padding, ceil_mode):
    k = _two(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] else _two(stride, "stride")
    ph, pw = _two(padding, "padding")
    return dict(kernel_shape=k, strides=s, pads=[ph, pw, ph, pw], ceil_mode=int(ceil_mode))


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False):
    return apply(
        "MaxPool", x, dilations=_two(dilation, "dilation"), **_pool_attrs(kernel_size, stride, padding, ceil_mode)
    )


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    return apply(
        "AveragePool",
        x,
        count_include_pad=int(count_include_pad),
        **_pool_attrs(kernel_size, stride, padding, ceil_mode),
    )


def adaptive_avg_pool2d(x, output_size):
    oh, ow = _two(output_size, "output_size")
    h, w = x.shape[2:]
    if (oh, ow) == (1, 1):
        return apply("GlobalAveragePool", x)
    if h % oh or w % ow:
        raise MnnError(
            f"adaptive_avg_pool2d: input {h}x{w} is not a multiple of the output {oh}x{ow}; "
            "only evenly dividing sizes are supported"
        )
    return avg_pool2d(x, (h // oh, w // ow))


def batch_norm(
    x,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
):
    """PyTorch's batch_norm. In training the running statistics are updated (assigned)."""
    from .lazy import assign

    c = x.shape[1]
    like = x if isinstance(x, Var) else None
    weight = as_var(np.ones(c, x.dtype), like) if weight is None else weight
    bias = as_var(np.zeros(c, x.dtype), like) if bias is None else bias
    if not training:
        if running_mean is None or running_var is None:
            raise MnnError("batch_norm in eval mode needs running_mean and running_var")
        return apply("BatchNormalization", x, weight, bias, running_mean, running_var, epsilon=eps)
    rm = Var(np.zeros(c, x.dtype)) if running_mean is None else running_mean
    rv = Var(np.ones(c, x.dtype)) if running_var is None else running_var
    y, _, _, new_mean, new_var = apply(
        "BatchNormTraining", x, weight, bias, rm, rv, n_outputs=5, epsilon=eps, momentum=momentum
    )
    if running_mean is not None:
        assign(running_mean, new_mean)
    if running_var is not None:
        assign(running_var, new_var)
    return y


def layer_norm(x, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    n = 1 if isinstance(normalized_shape, (int, np.integer)) else len(normalized_shape)
    return apply("LayerNormalization", x, weight, bias, axis=-n, epsilon=eps)


def dropout(x, p: float = 0.5, training: bool = True):
    """Inverted dropout; under a compiled step the mask is a fresh graph input every run."""
    if not training or p == 0.0:
        return x
    if not 0.0 <= p < 1.0:
        raise MnnError(f"dropout probability must be in [0, 1), got {p}")
    shape, dtype = x.shape, x.dtype
    keep = 1.0 - p

    def mask() -> np.ndarray:
        return ((rng.generator().random(shape) < keep) / keep).astype(dtype)

    trace = MODE.trace or x._trace
    m = trace.feed("dropout_mask", mask, shape, dtype.name) if trace is not None else Var._wrap(mask())
    return x * m


def embedding(indices, weight, padding_idx: int | None = None):
    """Rows of weight; the row at padding_idx reads as stored but takes no gradient (as PyTorch)."""
    if padding_idx is None or not weight.requires_grad:
        return apply("Gather", weight, indices, axis=0)
    keep = np.ones((weight.shape[0], 1), weight.dtype)
    keep[padding_idx] = 0
    frozen = weight.detach() * as_var(1 - keep, weight)
    return apply("Gather", weight * as_var(keep, weight) + frozen, indices, axis=0)


# -- losses ----------------------------------------------------------------------------------------


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise MnnError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def cross_entropy(input, target, reduction: str = "mean", ignore_index: int = -100, label_smoothing: float = 0.0):
    """Softmax cross-entropy over axis 1; target: class indices or probabilities."""
    target = target if isinstance(target, Var) else Var(np.asarray(target))
    return apply(
        "SoftmaxCrossEntropy",
        input,
        target,
        reduction=reduction,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )


def nll_loss(input, target, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities: the mean of -input[i, target[i]]."""
    c = input.shape[1]
    target = target if isinstance(target, Var) else Var(np.asarray(target))
    onehot = apply("Gather", as_var(np.eye(c, dtype=input.dtype), input), target, axis=0)
    return _reduce(-sum(input * onehot, axis=1), reduction)


def mse_loss(input, target, reduction: str = "mean"):
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction: str = "mean"):
    return _reduce(abs(input - target), reduction)


def binary_cross_entropy_with_logits(input, target, reduction: str = "mean", pos_weight=None):
    """softplus(x) - x * t, stable for any logit (with pos_weight: weighted positives)."""
    if pos_weight is None:
        loss = softplus(input) - input * target
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * softplus(-input)
    return _reduce(loss, reduction)

"""Layers with PyTorch's names, arguments and default initialization."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import MnnError
from ..express import functional as F
from . import init
from .conv import _ConvNd
from .module import Module, Parameter


class Identity(Module):
    def forward(self, x):
        return x


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(np.empty((out_features, in_features), np.float32))
        self.bias = Parameter(np.empty(out_features, np.float32)) if bias else None
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(_ConvNd):
    """Input (N, C, H, W); weight (out, in / groups, kh, kw)."""

    _k = 2
    _fn = staticmethod(F.conv2d)


class _BatchNorm(Module):
    _ranks: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, np.float32))
            self.register_buffer("running_var", np.ones(num_features, np.float32))
        else:
            self.running_mean = self.running_var = None

    def forward(self, x):
        if x.ndim not in self._ranks:
            raise MnnError(
                f"{type(self).__name__} takes input of rank {' or '.join(map(str, self._ranks))}, got shape {x.shape}"
            )
        use_batch = self.training or not self.track_running_stats
        return F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias, use_batch, self.momentum, self.eps
        )

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ranks = (4,)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        affine = elementwise_affine
        self.weight = Parameter(np.ones(self.normalized_shape, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(self.normalized_shape, np.float32)) if affine and bias else None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = Parameter(np.empty((num_embeddings, embedding_dim), np.float32))
        init.normal_(self.weight)
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0

    def forward(self, indices):
        return F.embedding(indices, self.weight, self.padding_idx)


class Dropout(Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return F.flatten(x, self.start_dim, self.end_dim)


def _activation(name: str, fn, doc: str):
    cls = type(name, (Module,), {"forward": lambda self, x: fn(x), "__doc__": doc})
    return cls


ReLU = _activation("ReLU", F.relu, "max(x, 0)")
ReLU6 = _activation("ReLU6", F.relu6, "min(max(x, 0), 6)")
GELU = _activation("GELU", F.gelu, "x * Phi(x), the erf form")
SiLU = _activation("SiLU", F.silu, "x * sigmoid(x)")
Sigmoid = _activation("Sigmoid", F.sigmoid, "1 / (1 + exp(-x))")
Tanh = _activation("Tanh", F.tanh, "tanh(x)")
Hardswish = _activation("Hardswish", F.hardswish, "x * relu6(x + 3) / 6")


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)


class Softmax(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self.dim)


# -- losses ------------------------------------------------------------------------------------


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__()
        if weight is not None:
            raise MnnError("CrossEntropyLoss: per-class weights are not supported yet")
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.reduction, self.ignore_index, self.label_smoothing)


class NLLLoss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.reduction)


class MSELoss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(MSELoss):
    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class BCEWithLogitsLoss(Module):
    def __init__(self, reduction: str = "mean", pos_weight: Sequence[float] | None = None):
        super().__init__()
        self.reduction = reduction
        self.pos_weight = None if pos_weight is None else np.asarray(pos_weight, np.float32)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.reduction, self.pos_weight)

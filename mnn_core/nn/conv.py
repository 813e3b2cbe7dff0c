"""Convolutions over 1, 2 and 3 spatial axes (Conv2d, in layers.py, on this _ConvNd too) and the 2-D
transposed convolution, as torch.nn."""

from __future__ import annotations

import numpy as np

from ..errors import MnnError
from ..express import torch_ops as T
from . import init
from .module import Module, Parameter


def _tuple(v, k: int) -> tuple:
    return (int(v),) * k if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)


def _check(name: str, in_channels: int, out_channels: int, groups: int, padding_mode: str) -> None:
    if padding_mode != "zeros":
        raise MnnError(f"{name}: padding_mode {padding_mode!r} is not supported (only 'zeros')")
    if in_channels % groups or out_channels % groups:
        raise MnnError(f"{name}: channels {in_channels} -> {out_channels} must divide by groups={groups}")


class _ConvNd(Module):
    """A convolution over `_k` spatial axes, by `_fn` (Conv1d, Conv2d, Conv3d)."""

    _k = 0
    _fn = staticmethod(T.conv1d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
    ):
        super().__init__()
        _check(type(self).__name__, in_channels, out_channels, groups, padding_mode)
        k = self._k
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _tuple(kernel_size, k), _tuple(stride, k), _tuple(dilation, k)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, k)
        self.weight = Parameter(np.empty((out_channels, in_channels // groups) + self.kernel_size, np.float32))
        self.bias = Parameter(np.empty(out_channels, np.float32)) if bias else None
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, x):
        return self._fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}"
        )


class Conv1d(_ConvNd):
    """Input (N, C, L); weight (out, in / groups, k)."""

    _k = 1
    _fn = staticmethod(T.conv1d)


class Conv3d(_ConvNd):
    """Input (N, C, D, H, W); weight (out, in / groups, kd, kh, kw)."""

    _k = 3
    _fn = staticmethod(T.conv3d)


class ConvTranspose2d(Module):
    """The adjoint of Conv2d (upsampling); weight (in, out / groups, kh, kw) as in PyTorch."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
    ):
        super().__init__()
        _check("ConvTranspose2d", in_channels, out_channels, groups, padding_mode)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _tuple(kernel_size, 2), _tuple(stride, 2)
        self.padding, self.output_padding = _tuple(padding, 2), _tuple(output_padding, 2)
        self.dilation = _tuple(dilation, 2)
        self.weight = Parameter(np.empty((in_channels, out_channels // groups) + self.kernel_size, np.float32))
        self.bias = Parameter(np.empty(out_channels, np.float32)) if bias else None
        init.default_weight_and_bias_(self.weight, self.bias)

    def forward(self, x):
        return T.conv_transpose2d(
            x, self.weight, self.bias, self.stride, self.padding, self.output_padding, self.groups, self.dilation
        )

    extra_repr = _ConvNd.extra_repr

"""Pooling over one spatial axis (N, C, L), as torch.nn: MaxPool1d, AvgPool1d, AdaptiveAvgPool1d;
each runs the 2-D pooling kernels on a (N, C, 1, L) view."""

from __future__ import annotations

from ..express import torch_ops as T
from .module import Module


class MaxPool1d(Module):
    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return T.max_pool1d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, padding={self.padding}"


class AvgPool1d(MaxPool1d):
    def forward(self, x):
        return T.avg_pool1d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool1d(Module):
    """Output lengths that divide the input length (1 included): the common cases."""

    def __init__(self, output_size: int):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return T.adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

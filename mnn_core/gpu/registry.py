"""Moved to mnn_core.backend.kit.gpu_kernels (this path keeps working for one release)."""

from ..backend.kit.gpu_kernels import F32, GpuKernel
from ..backend.kit.gpu_kernels import GpuKernelTable as KernelTable

__all__ = ["F32", "GpuKernel", "KernelTable"]

"""Moved to mnn_core.backend.kit (this path keeps working for one release): mnn_core.gpu.<module> is
mnn_core.backend.kit.<module>, and mnn_core.gpu.registry's KernelTable is kit.gpu_kernels.GpuKernelTable."""

import sys

from ..backend.kit import codes, layout, params, recorder, tiling
from . import registry

for _module in (codes, layout, params, recorder, tiling):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[-1]}"] = _module

__all__ = ["codes", "layout", "params", "recorder", "registry", "tiling"]

"""The OpenGL kernels: one op family per module, each registering its ops here.

A kernel is a KernelSpec (what it takes, as data, with a `supports` check that
names what it declines) and a `record(op, rec)` function that turns one
SegmentOp into dispatches on a Recorder. Only float32 tensors: the arena is
read as float words. The API-free arithmetic (strides, codes) is mnn_core.backend.kit's,
shared with mnn-vulkan and mnn-metal.
"""

from __future__ import annotations

from mnn_core.backend.kit.gpu_kernels import GpuKernelTable

from ..recorder import MAX_ELEMENTS

#: the shaders index with 32-bit *signed* integers
KERNELS = GpuKernelTable(MAX_ELEMENTS // 2)
register = KERNELS.register


from . import conv, deconv, eltwise, index, logic, matmul, ml, norm, pool, quant, reduce, resize, rnn, shape  # noqa: E402,F401  (registration)

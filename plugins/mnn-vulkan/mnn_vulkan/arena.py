"""The plan's device memory: one VkBuffer holding every tensor of the Vulkan domain.

The core allocates the arena before any op is prepared and writes the
weights into it right away, but which device a session uses is known only
when its first segment is prepared (the "vulkan.device" option arrives with
the PrepareContext). So the arena binds to a device at that moment: writes
before it (the weights) are kept by reference and uploaded then, once.
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np

from mnn_core.backend import Arena
from mnn_core.errors import BackendError

from . import _vulkan

#: extra bytes past the last tensor, so a binding of an empty tensor stays in bounds
PAD = 256
_handles = itertools.count(1)


class VulkanArena(Arena):
    def __init__(self, nbytes: int, half: bool = False):
        super().__init__(nbytes)
        #: float32 tensors are stored as float16 (precision="low" on a device with fp16):
        #: host copies convert on the way (F16C, in C), so users still see float32
        self.half = half
        self.handle = next(_handles)  # what mnn_tensor.data carries; the segments know the buffer
        self.buffer = None
        self.device = None
        self.writes = self.reads = 0  # host copies, for tests and tools
        self._pending: list[tuple[int, np.ndarray]] = []

    def bind(self, device, staging: bool) -> None:
        """Allocate on `device` (host-mapped unless staging is asked for or the GPU is discrete)."""
        if self.buffer is not None:
            if device is not self.device:
                raise BackendError(f"this plan's Vulkan memory is on {self.device.name}, not {device.name}")
            return
        mapped = device.host_shared and not staging
        self.buffer = _vulkan.Buffer(device.context, self.nbytes + PAD, mapped)
        self.device = device
        for offset, array in self._pending:
            self.buffer.write(offset, array, self._halved(array))
        self._pending.clear()

    def write(self, offset: int, array: np.ndarray) -> None:
        self.writes += 1
        array = np.ascontiguousarray(array)
        if self.buffer is None:
            self._pending.append((offset, array))
        else:
            self.buffer.write(offset, array, self._halved(array))

    def _halved(self, array: np.ndarray) -> bool:
        return self.half and array.dtype == np.float32

    def read(self, offset: int, out: np.ndarray) -> None:
        self.reads += 1
        if self.buffer is None:  # a plan of views only has no segment to bind it: use the default device
            from .device import choose

            self.bind(choose(None), staging=False)
        if out.flags.c_contiguous:
            self.buffer.read(offset, out, self._halved(out))
        else:
            tmp = np.empty_like(out, order="C")
            self.buffer.read(offset, tmp, self._halved(out))
            out[...] = tmp

    def view(self, offset: int, info) -> np.ndarray:
        if self.buffer is None or not self.buffer.mapped:
            raise NotImplementedError("device-local Vulkan memory is reached through staging copies only")
        if self.half and np.dtype(info.dtype) == np.float32:
            raise NotImplementedError('float tensors are stored as float16 here (precision="low")')
        raw = (ctypes.c_char * info.nbytes).from_address(self.buffer.address + offset)
        return np.frombuffer(raw, dtype=info.dtype).reshape(info.shape)

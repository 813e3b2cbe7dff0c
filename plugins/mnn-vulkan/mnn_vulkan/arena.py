"""The plan's device memory: one VkBuffer holding every tensor of the Vulkan domain.

The core allocates the arena before any op is prepared and writes the
weights into it right away, but which device a session uses is known only
when its first segment is prepared (the "vulkan.device" option arrives with
the PrepareContext). So the arena binds to a device at that moment: writes
before it (the weights) are kept by reference and uploaded then, once.
"""

from __future__ import annotations

import ctypes

import numpy as np

from mnn_core.backend.kit.arena import PAD, DeviceArena

from . import _vulkan


class VulkanArena(DeviceArena):
    """float32 tensors are stored as float16 under `half` (precision="low" on a device with fp16):
    the host copies convert on the way (F16C, in C)."""

    api = "Vulkan"

    def bind(self, device, staging: bool) -> None:
        """Allocate on `device` (host-mapped unless staging is asked for or the GPU is discrete)."""
        if self._bound_to(device):
            return
        mapped = device.host_shared and not staging
        self._attach(_vulkan.Buffer(device.context, self.nbytes + PAD, mapped), device)

    def _bind_default(self) -> None:
        from .device import choose

        self.bind(choose(None), staging=False)

    def view(self, offset: int, info) -> np.ndarray:
        if self.buffer is None or not self.buffer.mapped:
            raise NotImplementedError("device-local Vulkan memory is reached through staging copies only")
        if self.half and np.dtype(info.dtype) == np.float32:
            raise NotImplementedError('float tensors are stored as float16 here (precision="low")')
        raw = (ctypes.c_char * info.nbytes).from_address(self.buffer.address + offset)
        return np.frombuffer(raw, dtype=info.dtype).reshape(info.shape)

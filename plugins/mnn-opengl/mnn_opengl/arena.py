"""The plan's device memory: one shader storage buffer holding every tensor of the OpenGL domain.

The core allocates the arena and writes the weights into it before any
segment is prepared; which context a session uses is known from the session
options it passes (or, with older cores, at the first segment). Writes before
the arena is bound are kept and uploaded then, once.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.arena import PAD, DeviceArena
from mnn_core.errors import BackendError

from . import _gl


class OpenGLArena(DeviceArena):
    api = "OpenGL"

    def __init__(self, nbytes: int) -> None:
        super().__init__(nbytes)  # no float16 storage here

    def bind(self, device) -> None:
        if self._bound_to(device):
            return
        limit = device.props["max_ssbo_bytes"]
        if self.nbytes + PAD > limit:
            raise BackendError(
                f"the plan needs {self.nbytes} bytes of OpenGL memory but one storage block may hold "
                f"{limit} (GL_MAX_SHADER_STORAGE_BLOCK_SIZE); use a smaller input or another backend"
            )
        self._attach(_gl.Buffer(device.context, self.nbytes + PAD), device)

    def _bind_default(self) -> None:
        from .device import open_device

        self.bind(open_device())

    def _copy_in(self, offset: int, array: np.ndarray) -> None:
        self.buffer.write(offset, array)

    def _copy_out(self, offset: int, out: np.ndarray) -> None:
        self.buffer.read(offset, out)

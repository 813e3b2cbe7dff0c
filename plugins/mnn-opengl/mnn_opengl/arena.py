"""The plan's device memory: one shader storage buffer holding every tensor of the OpenGL domain.

The core allocates the arena and writes the weights into it before any
segment is prepared; which context a session uses is known from the session
options it passes (or, with older cores, at the first segment). Writes before
the arena is bound are kept and uploaded then, once.
"""

from __future__ import annotations

import itertools

import numpy as np

from mnn_core.backend import Arena
from mnn_core.errors import BackendError

from . import _gl

PAD = 256  # bytes past the last tensor, so an empty tensor's offset stays inside the buffer
_handles = itertools.count(1)


class OpenGLArena(Arena):
    def __init__(self, nbytes: int):
        super().__init__(nbytes)
        self.handle = next(_handles)  # what mnn_tensor.data carries; the segments know the buffer
        self.buffer = None
        self.device = None
        self.writes = self.reads = 0  # host copies, for tests and tools
        self._pending: list[tuple[int, np.ndarray]] = []

    def bind(self, device) -> None:
        if self.buffer is not None:
            if device is not self.device:
                raise BackendError(f"this plan's OpenGL memory is on {self.device.name}, not {device.name}")
            return
        limit = device.props["max_ssbo_bytes"]
        if self.nbytes + PAD > limit:
            raise BackendError(
                f"the plan needs {self.nbytes} bytes of OpenGL memory but one storage block may hold "
                f"{limit} (GL_MAX_SHADER_STORAGE_BLOCK_SIZE); use a smaller input or another backend"
            )
        self.buffer = _gl.Buffer(device.context, self.nbytes + PAD)
        self.device = device
        for offset, array in self._pending:
            self.buffer.write(offset, array)
        self._pending.clear()

    def write(self, offset: int, array: np.ndarray) -> None:
        self.writes += 1
        array = np.ascontiguousarray(array)
        if self.buffer is None:
            self._pending.append((offset, array))
        else:
            self.buffer.write(offset, array)

    def read(self, offset: int, out: np.ndarray) -> None:
        self.reads += 1
        if self.buffer is None:  # a plan of views only has no segment to bind it: use the default context
            from .device import open_device

            self.bind(open_device())
        if out.flags.c_contiguous:
            self.buffer.read(offset, out)
        else:
            tmp = np.empty_like(out, order="C")
            self.buffer.read(offset, tmp)
            out[...] = tmp

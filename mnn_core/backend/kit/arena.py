"""The plan's tensors in one device buffer, as the GPU backends keep them (mnn-vulkan, mnn-opengl,
mnn-metal): host copies in and out, counted, and the writes made before the buffer exists.

The core allocates the arena and writes the weights into it before any op is prepared, while the
device a session uses may be known only when its first segment is (its options arrive with the
PrepareContext). So a DeviceArena may bind late: writes before that are kept by reference and
uploaded once, at binding. With `half` (precision="low"), float32 tensors are stored as float16:
the buffer's own copies narrow and widen on the way, so users still see float32."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ...errors import BackendError
from ..api import Arena

#: bytes past the last tensor, so a binding of an empty tensor stays in bounds
PAD = 256
_handles = itertools.count(1)


class DeviceArena(Arena):
    """A subclass makes the buffer (`write(offset, array, halved)`, `read(offset, out, halved)`) in
    its own bind and hands it to `_attach`; `_bind_default` binds one where a read comes first (a
    plan of views only has no segment to bind it)."""

    api = "device"  # in errors: "this plan's <api> memory is on ..."

    def __init__(self, nbytes: int, half: bool = False) -> None:
        super().__init__(nbytes)
        self.half = half
        self.handle = next(_handles)  # what mnn_tensor.data carries; the segments know the buffer
        self.buffer: Any = None
        self.device: Any = None
        self.writes = self.reads = 0  # host copies, for tests and tools
        self._pending: list[tuple[int, np.ndarray]] = []

    def _bound_to(self, device: Any) -> bool:  # noqa: ANN401
        """Whether the buffer exists already (on `device`: another device is an error)."""
        if self.buffer is None:
            return False
        if device is not self.device:
            raise BackendError(f"this plan's {self.api} memory is on {self.device.name}, not {device.name}")
        return True

    def _attach(self, buffer: Any, device: Any) -> None:  # noqa: ANN401
        """Take the buffer just made on `device`, and upload the writes that waited for it."""
        self.buffer, self.device = buffer, device
        for offset, array in self._pending:
            self._copy_in(offset, array)
        self._pending.clear()

    def _bind_default(self) -> None:
        raise BackendError(f"this plan's {self.api} memory is not bound to a device yet")

    def _halved(self, array: np.ndarray) -> bool:
        return self.half and array.dtype == np.float32

    def _copy_in(self, offset: int, array: np.ndarray) -> None:
        self.buffer.write(offset, array, self._halved(array))

    def _copy_out(self, offset: int, out: np.ndarray) -> None:
        self.buffer.read(offset, out, self._halved(out))

    def write(self, offset: int, array: np.ndarray) -> None:
        self.writes += 1
        array = np.ascontiguousarray(array)
        if self.buffer is None:
            self._pending.append((offset, array))
        else:
            self._copy_in(offset, array)

    def read(self, offset: int, out: np.ndarray) -> None:
        self.reads += 1
        if self.buffer is None:
            self._bind_default()
        if out.flags.c_contiguous:
            self._copy_out(offset, out)
        else:
            tmp = np.empty_like(out, order="C")
            self._copy_out(offset, tmp)
            out[...] = tmp

"""The plan's device memory: one VkBuffer holding every tensor of the Vulkan domain.

The core allocates the arena before any op is prepared and writes the
weights into it right away (with an older core, which device a session uses
is known only when its first segment is prepared: the arena binds then, and
writes before it are kept by reference). Either way the weights are not
copied one by one: writes are collected until something needs the memory
(`flush`: the first prepare_segment, a read, a view) and go in one
`Buffer.write_many`, on a discrete GPU one staging submit per 32 MiB instead
of a submit and a fence wait per tensor.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from mnn_core.backend import CExecution
from mnn_core.backend.kit.arena import PAD, DeviceArena

from . import _vulkan
from ._vulkan import Transfer


class VulkanArena(DeviceArena):
    """float32 tensors are stored as float16 under `half` (precision="low" on a device with fp16):
    the host copies convert on the way (F16C, in C).

    Device-local memory is allocated in a thread (`bind`): NVIDIA's vkAllocateMemory of a model's
    arena takes tens of milliseconds, which then overlap the session's planning and the segment's
    pipelines; `buffer` waits for it."""

    api = "Vulkan"

    def __init__(self, nbytes: int, half: bool = False) -> None:
        self._making: tuple | None = None  # (thread, [result], device) of an allocation under way
        self._buffer = None
        super().__init__(nbytes, half)
        self._batch: list[tuple[int, np.ndarray]] | None = []  # None once flushed: writes go straight in

    @property
    def buffer(self):
        if self._making is not None:
            self._finish_making()
        return self._buffer

    @buffer.setter
    def buffer(self, value) -> None:
        self._buffer = value

    def _finish_making(self) -> None:
        thread, result, device = self._making
        thread.join()
        self._making = None
        if isinstance(result[0], BaseException):
            raise result[0]
        self._attach(result[0], device)

    def write(self, offset: int, array: np.ndarray) -> None:
        if self._batch is None:
            super().write(offset, array)
            return
        self.writes += 1
        self._batch.append((offset, np.ascontiguousarray(array)))

    def flush(self) -> None:
        """Upload the writes collected so far (binding the default device if none is bound yet);
        later writes (inputs, at run) are copied at once."""
        batch, self._batch = self._batch, None
        if not batch:
            return
        if self.buffer is None:
            self._bind_default()
        self.buffer.write_many([(offset, array, self._halved(array)) for offset, array in batch])

    def read(self, offset: int, out: np.ndarray) -> None:
        self.flush()
        super().read(offset, out)

    def bind(self, device, staging: bool) -> None:
        """Allocate on `device` (host-mapped unless staging is asked for or the GPU is discrete);
        device-local memory in a thread, which also waits for the device to open."""
        if self._making is not None and self._making[2] is device:
            return
        if self._bound_to(device):
            return
        mapped = device.host_shared and not staging
        if mapped:
            self._attach(_vulkan.Buffer(device.context, self.nbytes + PAD, True), device)
            return
        result: list = [None]

        def make() -> None:
            try:
                result[0] = _vulkan.Buffer(device.context, self.nbytes + PAD, False)
            except BaseException as exc:  # noqa: BLE001  (raised again where the buffer is wanted)
                result[0] = exc

        from .device import in_thread

        self._making = (in_thread(make, "mnn-vulkan-arena"), result, device)

    def _bind_default(self) -> None:
        from .device import choose

        self.bind(choose(None), staging=False)

    def copy_execution(self, to_device: bool, offset: int, host: np.ndarray) -> CExecution | None:
        """A run's copy of `host`'s bytes to or from `offset` in C (mvk_transfer.c): the run loop calls
        it without the GIL, and an upload reads the caller's array where the session hands it over.
        MNN_VULKAN_RUN_COPIES=python leaves them to the core's Python steps (A/B runs)."""
        if os.environ.get("MNN_VULKAN_RUN_COPIES", "") == "python":
            return None
        return _Copy(self, to_device, offset, host)

    def view(self, offset: int, info) -> np.ndarray:
        self.flush()
        if self.buffer is None or not self.buffer.mapped:
            raise NotImplementedError("device-local Vulkan memory is reached through staging copies only")
        if self.half and np.dtype(info.dtype) == np.float32:
            raise NotImplementedError('float tensors are stored as float16 here (precision="low")')
        raw = (ctypes.c_char * info.nbytes).from_address(self.buffer.address + offset)
        return np.frombuffer(raw, dtype=info.dtype).reshape(info.shape)


class _Copy(CExecution):
    """A copy step's execution, made when the run loop takes its capsule, once every segment is
    prepared: the arena's buffer may still be in the making (`bind`) when the step is built."""

    __slots__ = ("_args",)

    def __init__(self, arena: VulkanArena, to_device: bool, offset: int, host: np.ndarray) -> None:
        self._args = (arena, bool(to_device), offset, host.nbytes, arena._halved(host))
        self.owner, self.name, self.packed = None, "vulkan:upload" if to_device else "vulkan:download", frozenset()

    @property
    def capsule(self):
        if self.owner is None:
            arena, to_device, offset, nbytes, half = self._args
            try:
                arena.flush()
                if arena.buffer is None:
                    arena._bind_default()
                self.owner = Transfer(arena.buffer, offset, nbytes // 2 if half else nbytes, half, to_device)
            except AttributeError as exc:  # not swallowed by the run loop's getattr(step, "capsule", None)
                raise RuntimeError(f"cannot make the {self.name} copy: {exc}") from exc
        return self.owner.capsule()

"""The device arena: one cl_mem buffer per plan, placed by the core's planner.

`handle` (the cl_mem) goes into mnn_tensor.data and every tensor is an offset
into it, so kernels take (buffer, element offset) arguments that are fixed at
resize. Writes from the host are blocking: the core reuses host memory as soon
as a copy step returns, and a blocking write costs nothing extra at the start
of a run (the queue is empty then). Reads block too: the read of an output is
the one point per run where the host waits for the device.
"""

from __future__ import annotations

import os

import numpy as np

from mnn_core.backend import Arena, CExecution
from mnn_core.errors import BackendError

#: kernels index the arena with 32-bit ints counting 4-byte elements
MAX_ARENA_BYTES = 4 * (2**31 - 1)
#: "c" (the default): a run's host copies are C executions (Transfer); "python": the core's Python steps
#: (write/read), for A/B runs
RUN_COPIES_OPTION = "opencl.run_copies"
RUN_COPIES_ENV = "MNN_OPENCL_RUN_COPIES"
RUN_COPIES_DEFAULT = "c"


class OpenCLArena(Arena):
    def __init__(self, runtime, nbytes: int, options=None):
        super().__init__(nbytes)
        copies = str((options or {}).get(RUN_COPIES_OPTION, os.environ.get(RUN_COPIES_ENV, "")) or RUN_COPIES_DEFAULT)
        if copies.lower() not in ("c", "python"):
            raise ValueError(f"{RUN_COPIES_OPTION} must be c or python, got {copies!r}")
        self.c_copies = copies.lower() == "c"
        if nbytes > MAX_ARENA_BYTES:
            raise BackendError(
                f"mnn-opencl: an arena of {nbytes / 2**30:.1f} GiB exceeds the 8 GiB its 32-bit "
                "kernel offsets reach; use a smaller batch"
            )
        max_alloc = runtime.entry.device["max_alloc"]
        if max_alloc and nbytes > max_alloc:
            raise BackendError(
                f"mnn-opencl: the plan needs one {nbytes / 2**20:.0f} MiB buffer but "
                f"{runtime.entry.label} allocates at most {max_alloc / 2**20:.0f} MiB at once"
            )
        self.runtime = runtime
        self.buffer = _allocate(runtime, nbytes)
        self.handle = self.buffer.handle
        self.reads = 0
        self.writes = 0

    def write(self, offset: int, array: np.ndarray) -> None:
        self.writes += 1
        self.buffer.write(offset, np.ascontiguousarray(array), True)

    def read(self, offset: int, out: np.ndarray) -> None:
        self.reads += 1
        if out.flags.c_contiguous:
            self.buffer.read(offset, out)
        else:
            tmp = np.empty(out.shape, out.dtype)
            self.buffer.read(offset, tmp)
            out[...] = tmp

    def copy_execution(self, to_device: bool, offset: int, host: np.ndarray) -> CExecution | None:
        """A run's copy of `host`'s bytes to or from `offset` in C (csrc/cl_transfer.c), run without the
        GIL; an upload reads the caller's array where the session hands it over. None (the core's
        Python steps) where opencl.run_copies (or $MNN_OPENCL_RUN_COPIES) is "python"."""
        return _Copy(self, to_device, offset, host.nbytes) if self.c_copies else None

    def rebind(self, runtime) -> None:
        """Move to another device's context (a session chose another device than the
        one the arena was allocated on), keeping its contents (the uploaded weights)."""
        if runtime is self.runtime:
            return
        data = np.empty(self.buffer.nbytes, np.uint8)
        self.buffer.read(0, data)
        self.runtime = runtime
        self.buffer = _allocate(runtime, self.nbytes)
        self.buffer.write(0, data, True)
        self.handle = self.buffer.handle


def _allocate(runtime, nbytes: int):
    from ._cl import CLError

    try:
        return runtime.context.buffer(max(nbytes, 64))
    except CLError as exc:
        raise BackendError(
            f"mnn-opencl: cannot allocate the {nbytes / 2**20:.1f} MiB arena on {runtime.entry.label}: {exc}"
        ) from None


class _Copy(CExecution):
    """A copy step's execution; its capsule is made when the run loop takes it, once every segment is
    prepared (prepare_segment may still move the arena to another device's buffer: rebind)."""

    __slots__ = ("_args",)

    def __init__(self, arena: OpenCLArena, to_device: bool, offset: int, nbytes: int) -> None:
        self._args = (arena, bool(to_device), int(offset), int(nbytes))
        self.owner, self.name, self.packed = None, "opencl:upload" if to_device else "opencl:download", frozenset()

    @property
    def capsule(self):
        if self.owner is None:
            from ._cl import Transfer

            arena, to_device, offset, nbytes = self._args
            self.owner = Transfer(arena.buffer, offset, nbytes, to_device)
        return self.owner.capsule()

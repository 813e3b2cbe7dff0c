"""The device arena: one cl_mem buffer per plan, placed by the core's planner.

`handle` (the cl_mem) goes into mnn_tensor.data and every tensor is an offset
into it, so kernels take (buffer, element offset) arguments that are fixed at
resize. Writes from the host are blocking: the core reuses host memory as soon
as a copy step returns, and a blocking write costs nothing extra at the start
of a run (the queue is empty then). Reads block too: the read of an output is
the one point per run where the host waits for the device.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend import Arena
from mnn_core.errors import BackendError

#: kernels index the arena with 32-bit ints counting 4-byte elements
MAX_ARENA_BYTES = 4 * (2**31 - 1)


class OpenCLArena(Arena):
    def __init__(self, runtime, nbytes: int):
        super().__init__(nbytes)
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

"""Recording a segment: dispatches, the barriers between them, and their constants.

Kernels describe each dispatch (shader, bindings, push constants, grid); the
recorder inserts a barrier only where a dispatch touches arena bytes that an
earlier, unbarriered one wrote (read-after-write, write-after-write) or reads
bytes it will overwrite (write-after-read), so independent dispatches (the
pieces of a Concat, the branches of an Inception block) overlap on the GPU.
Host-computed tables (Resize coordinates) go to a small per-segment constant
buffer, split-K partial sums to a per-segment scratch buffer (reused by every
dispatch of the segment, with barriers tracked like the arena's). `finish`
turns it all into one recorded command buffer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from . import _vulkan

CONST_ALIGN = 256  # >= minStorageBufferOffsetAlignment everywhere
MAX_GROUPS = 65535  # the minimum maxComputeWorkGroupCount Vulkan guarantees
MAX_ELEMENTS = (1 << 31) - 1  # shaders index with 32-bit integers


CONSTANTS = "constants"  # Binding.buffer of the segment's constant buffer
SCRATCH = "scratch"  # ... and of its scratch buffer


@dataclass(frozen=True)
class Binding:
    """A byte range one shader binding sees: in the arena (a _vulkan.Buffer), the
    segment's constants (CONSTANTS) or its scratch memory (SCRATCH)."""

    buffer: object
    offset: int
    nbytes: int
    written: bool = False


def pack(*values) -> bytes:
    """Push constants: ints as 32-bit (signed when negative), floats as fp32, lists flattened."""
    flat = []
    for v in values:
        flat.extend(v) if isinstance(v, (list, tuple)) else flat.append(v)
    fmt = "".join("f" if isinstance(v, float) else ("i" if v < 0 else "I") for v in flat)
    return struct.pack("<" + fmt, *flat)


def linear_groups(total: int, local: int) -> tuple[int, int, int]:
    """A 2-D grid of 1-D work groups covering `total` invocations (see flat_index())."""
    n = -(-total // local)
    gx = min(n, MAX_GROUPS)
    return (gx, -(-n // gx) if n else 0, 1)


def row_groups(rows: int) -> tuple[int, int, int]:
    """One work group per row, on a 2-D grid."""
    gx = min(rows, MAX_GROUPS)
    return (gx, -(-rows // gx) if rows else 0, 1)


def _overlaps(a: tuple, ranges: list) -> bool:
    """a = (buffer key, start, end) against ranges of the same form."""
    return any(a[0] == key and a[1] < end and start < a[2] for key, start, end in ranges)


class Recorder:
    def __init__(self, device, arena, timestamps: bool = False, options: dict | None = None, fp16: bool = False):
        self.device = device
        self.fp16 = fp16  # constant weights may be stored as float16 (precision="low", device support)
        self.arena = arena
        self.timestamps = timestamps
        self.options = options or {}
        self.dispatches: list = []
        self.constants: list[tuple[int, np.ndarray]] = []
        self.const_bytes = 0
        self.scratch_bytes = 0
        self.barriers = 0
        self.op_name = ""
        self._written: list = []  # arena byte ranges written since the last barrier
        self._read: list = []

    # -- bindings ---------------------------------------------------------------------

    def tensor(self, ref) -> Binding:
        """An input tensor of the segment (TensorRef): read by the dispatch, in whole words
        (the backend plans every tensor that way: a bool tensor's last word is all its own)."""
        return Binding(self.arena.buffer, ref.offset, -(-ref.info.nbytes // 4) * 4)

    def output(self, ref) -> Binding:
        return Binding(self.arena.buffer, ref.offset, -(-ref.info.nbytes // 4) * 4, written=True)

    def constant(self, array: np.ndarray) -> Binding:
        """A host array uploaded once with the segment (tables, packed parameters)."""
        data = np.ascontiguousarray(array)
        offset = self.const_bytes
        self.constants.append((offset, data))
        self.const_bytes += -(-max(data.nbytes, 4) // CONST_ALIGN) * CONST_ALIGN
        return Binding(CONSTANTS, offset, data.nbytes)

    def scratch(self, nbytes: int, written: bool) -> Binding:
        """The segment's scratch memory from byte 0 (sized for its largest user)."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return Binding(SCRATCH, 0, nbytes, written)

    # -- dispatches -------------------------------------------------------------------

    def dispatch(self, shader: str, bindings: list, push: bytes, groups: tuple, local: tuple = (256, 1, 1),
                 spec: tuple = ()) -> None:
        """Record one dispatch; skipped when it would do nothing (an empty output)."""
        if 0 in groups or any(b.written and b.nbytes == 0 for b in bindings):
            return
        spans = [(SCRATCH if b.buffer is SCRATCH else "arena", b.offset, b.offset + max(b.nbytes, 4), b.written)
                 for b in bindings if b.buffer is not CONSTANTS]
        barrier = any(_overlaps(s[:3], self._written) or (s[3] and _overlaps(s[:3], self._read)) for s in spans)
        if barrier:
            self.barriers += 1
            self._written, self._read = [], []
        for key, start, end, written in spans:
            (self._written if written else self._read).append((key, start, end))
        pipeline = self.device.pipeline(shader, len(bindings), tuple(local) + tuple(spec))
        self.dispatches.append((pipeline, bindings, push, groups, barrier, f"{self.op_name}:{shader}"))

    def elementwise(self, shader: str, bindings: list, push: bytes, total: int, local: int = 256) -> None:
        self.dispatch(shader, bindings, push, linear_groups(total, local), (local, 1, 1))

    def finish(self):
        """The recorded program (a _vulkan.Program)."""
        extra = {CONSTANTS: None, SCRATCH: None}
        if self.constants:
            extra[CONSTANTS] = _vulkan.Buffer(self.device.context, self.const_bytes, self.device.host_shared)
            for offset, data in self.constants:
                extra[CONSTANTS].write(offset, data)
        if self.scratch_bytes:
            extra[SCRATCH] = _vulkan.Buffer(self.device.context, self.scratch_bytes, False)
        program = _vulkan.Program(self.device.context)
        for pipeline, bindings, push, groups, barrier, name in self.dispatches:
            resolved = [(extra[b.buffer] if isinstance(b.buffer, str) else b.buffer, b.offset,
                         max(b.nbytes, 4)) for b in bindings]
            program.dispatch(pipeline, resolved, push, tuple(groups), barrier, name)
        program.finish(self.timestamps)
        return program

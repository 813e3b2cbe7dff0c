"""Recording a segment: dispatches, the barriers between them, and their parameters.

Every shader sees the plan's arena as one storage buffer (binding 0, float
words) and the segment's parameter buffer (binding 1, uint words); a
dispatch's parameters start at the word the uniform `pbase` names. Tensors are
addressed by element offsets inside the arena, so no buffer is re-bound
between dispatches and no offset-alignment rule applies.

A glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT) goes before a dispatch only
where it touches arena bytes that an earlier, unbarriered dispatch wrote
(read-after-write, write-after-write) or writes bytes one of them reads
(write-after-read). `finish` uploads the parameters once and returns the
replayable _gl.Segment.

Scratch (`scratch`) is words of the parameter buffer past the parameters,
zero at upload: state a kernel keeps between its own dispatches (a recurrent
layer's h and c). The recorder does not track it; a dispatch that reads what
the previous one wrote there asks for its barrier (`barrier=True`).
"""

from __future__ import annotations

import struct

import numpy as np

from mnn_core.backend.kit.recorder import linear_groups, row_groups

from . import _gl

MAX_GROUPS = 65535  # the minimum GL_MAX_COMPUTE_WORK_GROUP_COUNT that GL 4.3 / GLES 3.1 guarantee
MAX_ELEMENTS = (1 << 31) - 1  # shaders index with 32-bit signed integers


def words(*values) -> list[int]:
    """Parameters as uint32 words: ints as two's complement, floats as their fp32 bits, lists flattened."""
    out = []
    for v in values:
        for x in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(x, float):
                out.append(struct.unpack("<I", struct.pack("<f", x))[0])
            else:
                out.append(int(x) & 0xFFFFFFFF)
    return out


def element(ref) -> int:
    """A tensor's offset in the arena, in 32-bit words."""
    if ref.offset < 0 or ref.offset % 4:
        raise ValueError(f"tensor {ref.name} is not word-aligned in the OpenGL arena (byte offset {ref.offset})")
    return ref.offset // 4


def _overlaps(a: tuple, ranges: list) -> bool:
    return any(a[0] < end and start < a[1] for start, end in ranges)


class Recorder:
    def __init__(self, device, arena, options: dict | None = None):
        self.device = device
        self.arena = arena
        self.options = options or {}
        self.dispatches: list = []  # (program, param base, groups, barrier, label)
        self.params: list[int] = []
        self.scratch_words = 0
        self.barriers = 0
        self.op_name = ""
        self._written: list = []  # arena byte ranges written since the last barrier
        self._read: list = []

    def dispatch(
        self,
        shader: str,
        params: list,
        reads: list,
        writes: list,
        groups: tuple,
        local: tuple = (64, 1),
        defines: tuple = (),
        barrier: bool = False,
    ) -> None:
        """Record one dispatch of `shader`; `reads`/`writes` are the TensorRefs it touches
        (for barriers; `barrier` forces one). Skipped when it would do nothing."""
        if 0 in groups or any(w.info.size == 0 for w in writes):
            return
        spans = [(r.offset, r.offset + max(r.info.nbytes, 4), False) for r in reads if r is not None] + [
            (w.offset, w.offset + max(w.info.nbytes, 4), True) for w in writes
        ]
        barrier = barrier or any(
            _overlaps(s[:2], self._written) or (s[2] and _overlaps(s[:2], self._read)) for s in spans
        )
        if barrier:
            self.barriers += 1
            self._written, self._read = [], []
        for start, end, written in spans:
            (self._written if written else self._read).append((start, end))
        program = self.device.program(shader, (("LOCAL_X", local[0]), ("LOCAL_Y", local[1])) + tuple(defines))
        base = len(self.params)
        self.params.extend(words(*params))
        self.dispatches.append((program, base, tuple(groups), barrier, f"{self.op_name}:{shader}"))

    def elementwise(
        self,
        shader: str,
        params: list,
        reads: list,
        writes: list,
        total: int,
        local: int = 64,
        defines: tuple = (),
        barrier: bool = False,
    ) -> None:
        self.dispatch(shader, params, reads, writes, linear_groups(total, local), (local, 1), defines, barrier)

    def rows(self, shader: str, params: list, reads: list, writes: list, rows: int, group: int, shared: str) -> None:
        """A row per invocation, or with `group` > 1 a row per work group of that size, the shader
        built with `shared` defined to share the row's loop among the group."""
        if group == 1:
            self.elementwise(shader, params, reads, writes, rows)
        else:
            self.dispatch(shader, params, reads, writes, row_groups(rows), (group, 1), ((shared, 1),))

    def scratch(self, words: int) -> int:
        """`words` zeroed scratch words for one kernel; their index in the parameter buffer (P[])."""
        self.scratch_words += words
        return -self.scratch_words  # made absolute in finish(), once the parameters' length is known

    def finish(self):
        """The replayable segment (a _gl.Segment); parameters uploaded once, here."""
        data = np.asarray((self.params or [0]) + [0] * self.scratch_words, dtype=np.uint32)
        params = _gl.Buffer(self.device.context, data.nbytes)
        params.write(0, data)
        return _gl.Segment(
            self.device.context,
            self.arena.buffer,
            params,
            [(p, base, groups, barrier) for p, base, groups, barrier, _ in self.dispatches],
        )

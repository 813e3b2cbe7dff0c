"""Recording a segment as data: the dispatches of its ops, ready for the native encoder.

The same shape as mnn-vulkan's Recorder (kernels call tensor / output /
constant / scratch / dispatch / elementwise with the Vulkan shaders' bindings,
parameter bytes and grids), but it produces a plain `SegmentPlan` instead of
Vulkan objects, so the whole op -> kernel mapping runs and is tested on any
OS. On macOS `_metal.Program` turns a plan into resolved C dispatch records
at resize (see csrc/mnn_metal.m).

No barriers are recorded: a Metal compute encoder of the default serial
dispatch type orders every dispatch after the previous one, and buffers from
one device heap are hazard-tracked by Metal itself.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from .signature import signature

CONST_ALIGN = 256  # Metal wants buffer offsets for constant/device arguments 256-byte aligned on macOS (Intel)
MAX_GROUPS = 65535  # the Vulkan shaders' flat_index() assumes the grid's x stays below this
MAX_ELEMENTS = (1 << 31) - 1  # the shaders index with 32-bit integers

ARENA = "arena"  # Binding.buffer of the plan's arena
CONSTANTS = "constants"  # ... of the segment's constant buffer (weights as fp16, tables)
SCRATCH = "scratch"  # ... and of its scratch buffer


@dataclass(frozen=True)
class Binding:
    """A byte range one kernel argument sees, in ARENA, CONSTANTS or SCRATCH."""

    buffer: str
    offset: int
    nbytes: int
    written: bool = False


@dataclass(frozen=True)
class Dispatch:
    """One kernel dispatch: bindings[i] goes to buffer(i), params to buffer(PARAMS_INDEX)."""

    kernel: str  # the shader / .metal file name
    bindings: tuple
    params: bytes
    grid: tuple  # threadgroups per grid
    threadgroup: tuple  # threads per threadgroup (function constants 0..2)
    spec: tuple  # the values of specialization constants 3, 4, ... (tilings)
    op: str  # the node it belongs to, for errors and profiles

    @property
    def function(self) -> str:
        return signature(self.kernel).function

    def function_constants(self) -> dict[int, int]:
        """Ids and values of the kernel's Metal function constants."""
        values = dict(enumerate(tuple(self.threadgroup) + tuple(self.spec)))
        return {i: values[i] for i in signature(self.kernel).function_constants}

    def macros(self) -> dict[int, int]:
        """The kernel's specialization constants that spirv-cross made preprocessor macros."""
        values = dict(enumerate(tuple(self.threadgroup) + tuple(self.spec)))
        return {i: values[i] for i in signature(self.kernel).macros}


@dataclass
class SegmentPlan:
    dispatches: list = field(default_factory=list)
    constants: bytes = b""  # the segment's constant buffer, uploaded once
    scratch_bytes: int = 0


def pack(*values) -> bytes:
    """Parameters: ints as 32-bit (signed when negative), floats as fp32, lists flattened."""
    flat = []
    for v in values:
        flat.extend(v) if isinstance(v, (list, tuple)) else flat.append(v)
    fmt = "".join("f" if isinstance(v, float) else ("i" if v < 0 else "I") for v in flat)
    return struct.pack("<" + fmt, *flat)


def linear_groups(total: int, local: int) -> tuple[int, int, int]:
    """A 2-D grid of 1-D threadgroups covering `total` threads (the shaders' flat_index())."""
    n = -(-total // local)
    gx = min(n, MAX_GROUPS)
    return (gx, -(-n // gx) if n else 0, 1)


def row_groups(rows: int) -> tuple[int, int, int]:
    """One threadgroup per row, on a 2-D grid."""
    gx = min(rows, MAX_GROUPS)
    return (gx, -(-rows // gx) if rows else 0, 1)


class Recorder:
    def __init__(self, options: dict | None = None, fp16: bool = False):
        self.options = options or {}
        self.fp16 = fp16  # constant weights stored as float16 (precision="low")
        self.dispatches: list[Dispatch] = []
        self._constants: list[tuple[int, np.ndarray]] = []
        self._const_bytes = 0
        self.scratch_bytes = 0
        self.op_name = ""

    def tensor(self, ref) -> Binding:
        """A tensor of the arena read by the dispatch, in whole 32-bit words."""
        return Binding(ARENA, ref.offset, -(-ref.info.nbytes // 4) * 4)

    def output(self, ref) -> Binding:
        return Binding(ARENA, ref.offset, -(-ref.info.nbytes // 4) * 4, written=True)

    def constant(self, array: np.ndarray) -> Binding:
        data = np.ascontiguousarray(array)
        offset = self._const_bytes
        self._constants.append((offset, data))
        self._const_bytes += -(-max(data.nbytes, 4) // CONST_ALIGN) * CONST_ALIGN
        return Binding(CONSTANTS, offset, data.nbytes)

    def scratch(self, nbytes: int, written: bool) -> Binding:
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return Binding(SCRATCH, 0, nbytes, written)

    def dispatch(
        self, kernel: str, bindings: list, params: bytes, groups: tuple, local: tuple = (256, 1, 1), spec: tuple = ()
    ) -> None:
        """Record one dispatch; skipped when it would do nothing (an empty output)."""
        if 0 in groups or any(b.written and b.nbytes == 0 for b in bindings):
            return
        threads = local[0] * local[1] * local[2]
        if threads > 1024:
            raise ValueError(f"{kernel}: {threads} threads per threadgroup exceed Metal's 1024")
        self.dispatches.append(
            Dispatch(kernel, tuple(bindings), params, tuple(groups), tuple(local), tuple(spec), self.op_name)
        )

    def elementwise(self, kernel: str, bindings: list, params: bytes, total: int, local: int = 256) -> None:
        self.dispatch(kernel, bindings, params, linear_groups(total, local), (local, 1, 1))

    def finish(self) -> SegmentPlan:
        blob = bytearray(self._const_bytes)
        for offset, data in self._constants:
            blob[offset : offset + data.nbytes] = data.tobytes()
        return SegmentPlan(self.dispatches, bytes(blob), self.scratch_bytes)

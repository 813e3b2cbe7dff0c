"""What a segment recorder does the same on every API: grids of work groups, and the
bookkeeping of bindings, constants, scratch and float16 storage (SegmentRecorder)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from .params import copy_params, pack
from .spirv import HALF_FMA_SHADERS, HALF_SHADERS

if TYPE_CHECKING:
    from ...graph.ir import TensorInfo
    from ..api import SegmentOp, TensorRef
    from ..kernels import Kernel

MAX_GROUPS = 65535  # the minimum maxComputeWorkGroupCount Vulkan guarantees; flat_index() keeps x below it
MAX_ELEMENTS = (1 << 31) - 1  # shaders index with 32-bit integers


def linear_groups(total: int, local: int) -> tuple[int, int, int]:
    """A 2-D grid of 1-D work groups covering `total` invocations (the shaders' flat_index())."""
    n = -(-total // local)
    gx = min(n, MAX_GROUPS)
    return (gx, -(-n // gx) if n else 0, 1)


def row_groups(rows: int) -> tuple[int, int, int]:
    """One work group per row, on a 2-D grid."""
    gx = min(rows, MAX_GROUPS)
    return (gx, -(-rows // gx) if rows else 0, 1)


@dataclass(frozen=True)
class Binding:
    """A byte range one shader binding sees: in a buffer of the arena, or in one of
    the segment's own buffers named by a string (constants, scratch, wide copies)."""

    buffer: object
    offset: int
    nbytes: int
    written: bool = False


CONSTANTS = "constants"  # Binding.buffer of the segment's constant buffer (host-computed tables)
SCRATCH = "scratch"  # ... of its scratch buffer
WIDE = "wide"  # ... and of the float32 copies of float16 tensors (ops with no float16 shaders)
#: where the segment's own buffers place each range: >= Vulkan's minStorageBufferOffsetAlignment
#: everywhere, and the 256 bytes Metal wants for buffer offsets on Intel Macs
ALIGN = 256


def tensor_bytes(info: TensorInfo, half: bool) -> int:
    """A tensor's bytes in the arena, in whole 32-bit words (the shaders read and write
    words); float32 tensors take 2 bytes an element under float16 storage."""
    nbytes = info.size * 2 if half and str(info.dtype) == "float32" else info.nbytes
    return -(-nbytes // 4) * 4


def _aligned(nbytes: int) -> int:
    return -(-max(nbytes, 4) // ALIGN) * ALIGN


class SegmentRecorder:
    """The API-free half of recording a segment: its constants and scratch, and float16
    storage. Under `half` every float tensor of the arena is float16; an op in
    `half_ops` (its shaders all have float16 variants) reads and writes them directly,
    any other op sees float32 copies: `tensor()` widens its float inputs into the
    segment's WIDE buffer first, `output()` hands it a float32 range there, and
    `end_op()` narrows that back into the arena. A subclass says where the arena is
    (`arena_buffer`) and records dispatches (`dispatch`)."""

    arena_buffer: object = "arena"

    def __init__(
        self, options: dict | None, half: bool, half_ops: Collection[str], fma_option: str, fma_env: str
    ) -> None:
        self.options = options or {}
        self.half = half  # float tensors are float16 in the arena
        self.half_ops = half_ops
        self.half_fma = half and bool(self.options.get(fma_option, os.environ.get(fma_env) == "1"))
        self.native = True  # the op being recorded has float16 shaders (set per op by begin_op)
        self.constants: list[tuple[int, np.ndarray]] = []
        self.const_bytes = 0
        self.scratch_bytes = 0
        self.wide_bytes = 0
        self._wide_used = 0
        self._widened: dict = {}
        self._narrow: list = []
        self.widened_ops: list[str] = []  # the ops that ran on float32 copies
        self.op_name = ""

    def dispatch(
        self,
        shader: str,
        bindings: list[Binding],
        params: bytes,
        groups: tuple[int, int, int],
        local: tuple[int, int, int] = (256, 1, 1),
        spec: tuple = (),
    ) -> None:
        raise NotImplementedError

    def record_op(
        self,
        op: SegmentOp,
        act: tuple[int, float, float] | None,
        kernels: Mapping[str, Kernel],
        record_fused: Callable[[SegmentOp, tuple[int, float, float], SegmentRecorder], None],
    ) -> None:
        """One op (SegmentOp) of the segment: `record_fused(op, act, self)` when an
        activation was fused into it (codes.fuse_activations), else its kernel's record."""
        self.op_name = op.node.name
        self.begin_op(op.node.op)
        if act is not None:
            record_fused(op, act, self)
        else:
            kernels[op.node.op].impl(op, self)
        self.end_op()

    def elementwise(self, shader: str, bindings: list, params: bytes, total: int, local: int = 256) -> None:
        self.dispatch(shader, bindings, params, linear_groups(total, local), (local, 1, 1))

    def variant(
        self,
        shader: str,
        half_shaders: Collection[str] = HALF_SHADERS,
        half_fma_shaders: Collection[str] = HALF_FMA_SHADERS,
    ) -> str:
        """The shader to run: its float16 variant (`_h`, or `_hf` with fp16 FMA) where it has one."""
        if self.half and self.native and shader in half_shaders:
            shader += "_hf" if self.half_fma and shader in half_fma_shaders else "_h"
        return shader

    def shader_for(self, shader: str, bindings: Sequence[Binding], groups: Sequence[int]) -> str | None:
        """What dispatch() records: the shader's variant (see variant), or None for a dispatch
        that would do nothing (an empty grid or an empty output), which is left out."""
        if 0 in groups or any(b.written and b.nbytes == 0 for b in bindings):
            return None
        return self.variant(shader)

    # -- bindings -----------------------------------------------------------------------

    def is_half(self, ref: TensorRef) -> bool:
        """Whether a tensor of the segment is stored as float16."""
        return self.half and str(ref.info.dtype) == "float32"

    def tensor(self, ref: TensorRef) -> Binding:
        """An input tensor (TensorRef) read by the dispatch: a float32 copy of a float16
        tensor for an op with no float16 shaders."""
        arena = Binding(self.arena_buffer, ref.offset, tensor_bytes(ref.info, self.half))
        if self.native or not self.is_half(ref):
            return arena
        key = (ref.offset, ref.info.size)
        if key not in self._widened:
            wide = self._wide(ref.info.size * 4)
            copy = Binding(WIDE, wide.offset, wide.nbytes, written=True)
            self.elementwise("widen", [arena, copy], pack(ref.info.size), ref.info.size)
            self._widened[key] = wide
        return self._widened[key]

    def output(self, ref: TensorRef) -> Binding:
        arena = Binding(self.arena_buffer, ref.offset, tensor_bytes(ref.info, self.half), written=True)
        if self.native or not self.is_half(ref):
            return arena
        wide = self._wide(ref.info.size * 4)
        self._narrow.append((wide, arena, ref.info.size))
        return Binding(WIDE, wide.offset, wide.nbytes, written=True)

    def _wide(self, nbytes: int) -> Binding:
        offset = self._wide_used
        self._wide_used += _aligned(nbytes)
        self.wide_bytes = max(self.wide_bytes, self._wide_used)
        return Binding(WIDE, offset, nbytes)

    def begin_op(self, op_type: str) -> None:
        self.native = not self.half or op_type in self.half_ops

    def end_op(self) -> None:
        """Narrow the float32 outputs of an op with no float16 shaders into the arena."""
        narrow, self._narrow = self._narrow, []
        if self._widened or narrow:
            self.widened_ops.append(self.op_name)
        self.native = True
        for wide, arena, size in narrow:
            self.elementwise("narrow", [wide, arena], pack(size), size)
        self._wide_used = 0
        self._widened.clear()

    def constant(self, array: np.ndarray) -> Binding:
        """A host array uploaded once with the segment (tables)."""
        data = np.ascontiguousarray(array)
        offset = self.const_bytes
        self.constants.append((offset, data))
        self.const_bytes += _aligned(data.nbytes)
        return Binding(CONSTANTS, offset, data.nbytes)

    def scratch(self, nbytes: int, written: bool) -> Binding:
        """The segment's scratch memory from byte 0 (sized for its largest user)."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return Binding(SCRATCH, 0, nbytes, written)


#: copy_words() of a float tensor stored as float16: record_copy() moves 16-bit elements (copy_h)
HALF = 0


def copy_words(ref: TensorRef, rec: SegmentRecorder | None = None) -> int:
    """The 32-bit words of one element of a tensor (2 for int64), or HALF for a float16
    tensor that `rec`'s current op reads directly."""
    if rec is not None and rec.native and rec.is_half(ref):
        return HALF
    return ref.info.nbytes // max(ref.info.size, 1) // 4 if ref.info.size else 1


def record_copy(
    rec: SegmentRecorder,
    src: Binding,
    dst: Binding,
    shape: Sequence[int],
    src_strides: Sequence[int],
    dst_strides: Sequence[int],
    src_off: int = 0,
    dst_off: int = 0,
    words: int = 1,
) -> None:
    """copy.comp (copy_h for HALF): dst[dst_off + idx . dst_strides] = src[src_off + idx . src_strides]
    for every idx of shape, in elements of `words` 32-bit words (see copy_words)."""
    shader = "copy"
    if words == HALF:
        shader, words = "copy_h", 1
    params, total = copy_params(shape, src_strides, dst_strides, src_off, dst_off, words)
    rec.elementwise(shader, [src, dst], params, total)

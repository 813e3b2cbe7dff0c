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

Under float16 storage (`half`: precision="low" on a device with fp16) every
float tensor in the arena is float16. An op whose kernel has float16 shader
variants (`HALF_OPS`) is recorded with them (dispatch() picks `<shader>_h`); any
other op sees float32 copies: `tensor()` widens its float inputs into the
segment's WIDE buffer first, `output()` hands it a float32 range there, and
`end_op()` narrows that back into the arena.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from mnn_core.gpu.params import pack
from mnn_core.gpu.recorder import MAX_ELEMENTS, MAX_GROUPS, linear_groups, row_groups  # noqa: F401  (re-exported)

from . import _vulkan

CONST_ALIGN = 256  # >= minStorageBufferOffsetAlignment everywhere


CONSTANTS = "constants"  # Binding.buffer of the segment's constant buffer
SCRATCH = "scratch"  # ... and of its scratch buffer
WIDE = "wide"  # ... and of the float32 copies of float16 tensors (ops with no float16 shaders)

#: ops whose kernels run on float16 tensors directly (every float shader they use has a _h variant)
HALF_OPS = set(  # the unary activations are added by kernels/eltwise.py
    [
        "Conv",
        "MatMul",
        "Gemm",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Max",
        "Min",
        "PRelu",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL2",
        "BatchNormalization",
        "LayerNormalization",
        "InstanceNormalization",
        "Softmax",
        "LogSoftmax",
    ]
)
#: shaders with a float16 variant <name>_h (float tensors float16; see common.glsl)
HALF_SHADERS = frozenset(
    [
        "conv2d",
        "conv_dw",
        "gemm",
        "gemv",
        "splitk_reduce",
        "binary",
        "unary",
        "pool2d",
        "reduce",
        "batchnorm",
        "norm_rows",
        "softmax",
    ]
)
#: ... and those with a <name>_hf variant that also multiplies and adds in float16
#: (options={"vulkan.fp16_fma": True} or MNN_VULKAN_FP16_FMA=1; see tile.glsl)
HALF_FMA_SHADERS = frozenset(["conv2d", "conv_dw", "gemm"])


@dataclass(frozen=True)
class Binding:
    """A byte range one shader binding sees: in the arena (a _vulkan.Buffer), the
    segment's constants (CONSTANTS) or its scratch memory (SCRATCH)."""

    buffer: object
    offset: int
    nbytes: int
    written: bool = False


def _overlaps(a: tuple, ranges: list) -> bool:
    """a = (buffer key, start, end) against ranges of the same form."""
    return any(a[0] == key and a[1] < end and start < a[2] for key, start, end in ranges)


class Recorder:
    def __init__(self, device, arena, timestamps: bool = False, options: dict | None = None, half: bool = False):
        self.device = device
        self.half = half  # float tensors are float16 in the arena (VulkanArena.half)
        self.native = True  # the op being recorded has float16 shaders (set per op by begin_op)
        self.wide_bytes = 0
        self._wide_used = 0
        self._widened: dict = {}
        self._narrow: list = []
        self.arena = arena
        self.timestamps = timestamps
        self.options = options or {}
        self.half_fma = half and bool(self.options.get("vulkan.fp16_fma", os.environ.get("MNN_VULKAN_FP16_FMA") == "1"))
        self.dispatches: list = []
        self.constants: list[tuple[int, np.ndarray]] = []
        self.const_bytes = 0
        self.scratch_bytes = 0
        self.barriers = 0
        self.op_name = ""
        self._written: list = []  # arena byte ranges written since the last barrier
        self._read: list = []

    # -- bindings ---------------------------------------------------------------------

    def _bytes(self, ref) -> int:
        """A tensor's bytes in the arena, in whole words (the backend plans every tensor that
        way: a bool tensor's last word is all its own); float tensors are float16 under `half`."""
        nbytes = ref.info.size * 2 if self._is_half(ref) else ref.info.nbytes
        return -(-nbytes // 4) * 4

    def _is_half(self, ref) -> bool:
        return self.half and str(ref.info.dtype) == "float32"

    def tensor(self, ref) -> Binding:
        """An input tensor of the segment (TensorRef), read by the dispatch: a float32 copy
        of a float16 tensor for an op with no float16 shaders."""
        arena = Binding(self.arena.buffer, ref.offset, self._bytes(ref))
        if self.native or not self._is_half(ref):
            return arena
        key = (ref.offset, ref.info.size)
        if key not in self._widened:
            wide = self._wide(ref.info.size * 4)
            self.elementwise(
                "widen",
                [arena, Binding(WIDE, wide.offset, wide.nbytes, written=True)],
                pack(ref.info.size),
                ref.info.size,
            )
            self._widened[key] = wide
        return self._widened[key]

    def output(self, ref) -> Binding:
        arena = Binding(self.arena.buffer, ref.offset, self._bytes(ref), written=True)
        if self.native or not self._is_half(ref):
            return arena
        wide = self._wide(ref.info.size * 4)
        self._narrow.append((wide, arena, ref.info.size))
        return Binding(WIDE, wide.offset, wide.nbytes, written=True)

    def _wide(self, nbytes: int) -> Binding:
        offset = self._wide_used
        self._wide_used += -(-max(nbytes, 4) // CONST_ALIGN) * CONST_ALIGN
        self.wide_bytes = max(self.wide_bytes, self._wide_used)
        return Binding(WIDE, offset, nbytes)

    def begin_op(self, op_type: str) -> None:
        self.native = not self.half or op_type in HALF_OPS

    def end_op(self) -> None:
        """Narrow the float32 outputs of an op with no float16 shaders into the arena."""
        narrow, self._narrow = self._narrow, []
        self.native = True
        for wide, arena, size in narrow:
            self.elementwise("narrow", [wide, arena], pack(size), size)
        self._wide_used = 0
        self._widened.clear()

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

    def dispatch(
        self, shader: str, bindings: list, push: bytes, groups: tuple, local: tuple = (256, 1, 1), spec: tuple = ()
    ) -> None:
        """Record one dispatch; skipped when it would do nothing (an empty output)."""
        if 0 in groups or any(b.written and b.nbytes == 0 for b in bindings):
            return
        if self.half and self.native and shader in HALF_SHADERS:
            shader += "_hf" if self.half_fma and shader in HALF_FMA_SHADERS else "_h"
        spans = [
            (b.buffer if isinstance(b.buffer, str) else "arena", b.offset, b.offset + max(b.nbytes, 4), b.written)
            for b in bindings
            if b.buffer is not CONSTANTS
        ]
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
        extra = {CONSTANTS: None, SCRATCH: None, WIDE: None}
        if self.constants:
            extra[CONSTANTS] = _vulkan.Buffer(self.device.context, self.const_bytes, self.device.host_shared)
            for offset, data in self.constants:
                extra[CONSTANTS].write(offset, data)
        if self.scratch_bytes:
            extra[SCRATCH] = _vulkan.Buffer(self.device.context, self.scratch_bytes, False)
        if self.wide_bytes:
            extra[WIDE] = _vulkan.Buffer(self.device.context, self.wide_bytes, False)
        program = _vulkan.Program(self.device.context)
        for pipeline, bindings, push, groups, barrier, name in self.dispatches:
            resolved = [
                (extra[b.buffer] if isinstance(b.buffer, str) else b.buffer, b.offset, max(b.nbytes, 4))
                for b in bindings
            ]
            program.dispatch(pipeline, resolved, push, tuple(groups), barrier, name)
        program.finish(self.timestamps)
        return program

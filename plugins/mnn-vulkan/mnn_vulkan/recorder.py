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

from mnn_core.backend.kit.codes import BINARY, REDUCE
from mnn_core.backend.kit.recorder import CONSTANTS, SCRATCH, WIDE, SegmentRecorder
from mnn_core.backend.kit.spirv import HALF_FMA_SHADERS, HALF_SHADERS  # noqa: F401  (re-exported for the tests)

from . import _vulkan

#: ops whose kernels run on float16 tensors directly (every float shader they use has a _h variant:
#: binary.comp and reduce.comp do, so every op mapped to them is here); kernels/eltwise.py adds the
#: unary activations
HALF_OPS = {
    *("Conv", "MatMul", "Gemm", "MaxPool", "AveragePool"),
    *BINARY,
    *REDUCE,
    *("BatchNormalization", "LayerNormalization", "InstanceNormalization", "Softmax", "LogSoftmax"),
}


def _overlaps(a: tuple, ranges: list) -> bool:
    """a = (buffer key, start, end) against ranges of the same form."""
    return any(a[0] == key and a[1] < end and start < a[2] for key, start, end in ranges)


class Recorder(SegmentRecorder):
    """Records a segment's dispatches with the barriers between them (see the module's
    docstring); the bindings and float16 bookkeeping are mnn_core.backend.kit's SegmentRecorder."""

    def __init__(self, device, arena, timestamps: bool = False, options: dict | None = None, half: bool = False):
        super().__init__(options, half, HALF_OPS, "vulkan.fp16_fma", "MNN_VULKAN_FP16_FMA")
        self.device = device
        self.arena = arena
        # bindings name the arena ("arena", the kit's default): its buffer may still be in the making
        # (arena.py) and is looked up in finish()
        self.timestamps = timestamps
        self.dispatches: list = []
        self.barriers = 0
        self._written: list = []  # arena byte ranges written since the last barrier
        self._read: list = []

    # -- dispatches -------------------------------------------------------------------

    def dispatch(
        self, shader: str, bindings: list, push: bytes, groups: tuple, local: tuple = (256, 1, 1), spec: tuple = ()
    ) -> None:
        """Record one dispatch; skipped when it would do nothing (an empty output)."""
        shader = self.shader_for(shader, bindings, groups)
        if shader is None:
            return
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

    def finish(self):
        """The recorded program (a _vulkan.Program)."""
        extra = {CONSTANTS: None, SCRATCH: None, WIDE: None, "arena": self.arena.buffer}
        if self.constants:
            extra[CONSTANTS] = _vulkan.Buffer(self.device.context, self.const_bytes, self.device.host_shared)
            # all tables in one staging submit on a discrete GPU (one each was a submit and a wait per
            # convolution's k-table: ResNet-50's start made 43 of them)
            extra[CONSTANTS].write_many([(offset, data, False) for offset, data in self.constants])
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

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

Under float16 storage (`half`: precision="low", exactly as mnn-vulkan stores
its arena) every float32 tensor of the arena holds float16, two bytes an
element: the core sizes it so through `MetalBackend.tensor_nbytes`, and host
copies narrow and widen on the way (`MetalArena`). An op whose kernels all have
a float16 variant (`HALF_OPS`) is recorded with them (dispatch() picks
`<kernel>_h`, or `<kernel>_hf` with "metal.fp16_fma"); any other op sees
float32 copies: `tensor()` widens its float inputs into the segment's WIDE
buffer first (widen.metal), `output()` hands it a float32 range there, and
`end_op()` narrows that back into the arena (narrow.metal).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mnn_core.backend.kit.recorder import (  # noqa: F401  (re-exported for the kernels and tests)
    CONSTANTS,
    MAX_ELEMENTS,
    MAX_GROUPS,
    SCRATCH,
    WIDE,
    Binding,
    SegmentRecorder,
    row_groups,
    tensor_bytes,
)
from mnn_core.backend.kit.spirv import HALF_FMA_SHADERS, HALF_SHADERS

from .signature import signature

ARENA = "arena"  # Binding.buffer of the plan's arena (CONSTANTS, SCRATCH, WIDE: the segment's own buffers)

#: ops whose kernels run on float16 tensors directly (every float kernel they use has a _h
#: variant, or is a copy: copy_h); mnn-vulkan's HALF_OPS restricted to the ops mapped here
HALF_OPS = set(
    ["Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"]
    + ["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"]
    + ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]
    + ["Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Concat"]
)  # the unary activations are added by kernels.py
#: the kernels with a float16 variant <name>_h, and those with a <name>_hf that also multiplies and adds
#: in float16 (options={"metal.fp16_fma": True} or MNN_METAL_FP16_FMA=1): the kit's shaders' own
HALF_KERNELS, HALF_FMA_KERNELS = HALF_SHADERS, HALF_FMA_SHADERS
FP16_FMA_OPTION = "metal.fp16_fma"


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
    wide_bytes: int = 0  # the float32 copies of float16 tensors for ops with no float16 kernels
    half: bool = False  # float32 tensors are stored as float16 in the arena (precision="low")
    widened: tuple = ()  # the ops that ran on such copies

    @property
    def precision(self) -> str:
        """Of the arena's float tensors: "float16" or "float32"."""
        return "float16" if self.half else "float32"


class Recorder(SegmentRecorder):
    """Records a segment's dispatches as data; the bindings and float16 bookkeeping are
    mnn_core.backend.kit's SegmentRecorder."""

    arena_buffer = ARENA

    def __init__(self, options: dict | None = None, half: bool = False):
        super().__init__(options, half, HALF_OPS, FP16_FMA_OPTION, "MNN_METAL_FP16_FMA")
        self.dispatches: list[Dispatch] = []

    def dispatch(
        self, kernel: str, bindings: list, params: bytes, groups: tuple, local: tuple = (256, 1, 1), spec: tuple = ()
    ) -> None:
        """Record one dispatch; skipped when it would do nothing (an empty output)."""
        kernel = self.shader_for(kernel, bindings, groups)
        if kernel is None:
            return
        threads = local[0] * local[1] * local[2]
        if threads > 1024:
            raise ValueError(f"{kernel}: {threads} threads per threadgroup exceed Metal's 1024")
        self.dispatches.append(
            Dispatch(kernel, tuple(bindings), params, tuple(groups), tuple(local), tuple(spec), self.op_name)
        )

    def finish(self) -> SegmentPlan:
        blob = bytearray(self.const_bytes)
        for offset, data in self.constants:
            blob[offset : offset + data.nbytes] = data.tobytes()
        return SegmentPlan(
            self.dispatches, bytes(blob), self.scratch_bytes, self.wide_bytes, self.half, tuple(self.widened_ops)
        )

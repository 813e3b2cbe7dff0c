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

import os
from dataclasses import dataclass, field

import numpy as np

from mnn_core.gpu.params import pack
from mnn_core.gpu.recorder import MAX_ELEMENTS, MAX_GROUPS, linear_groups, row_groups  # noqa: F401  (re-exported)

from .signature import signature

CONST_ALIGN = 256  # Metal wants buffer offsets for constant/device arguments 256-byte aligned on macOS (Intel)

ARENA = "arena"  # Binding.buffer of the plan's arena
CONSTANTS = "constants"  # ... of the segment's constant buffer (host-computed tables)
SCRATCH = "scratch"  # ... and of its scratch buffer
WIDE = "wide"  # ... and of the float32 copies of float16 tensors (ops with no float16 kernels)

#: ops whose kernels run on float16 tensors directly (every float kernel they use has a _h
#: variant, or is a copy: copy_h); mnn-vulkan's HALF_OPS restricted to the ops mapped here
HALF_OPS = set(
    ["Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"]
    + ["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"]
    + ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]
    + ["Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Concat"]
)  # the unary activations are added by kernels.py
#: kernels with a float16 variant <name>_h (float tensors float16), as mnn-vulkan's HALF_SHADERS
HALF_KERNELS = frozenset(
    ["conv2d", "conv_dw", "gemm", "gemv", "splitk_reduce", "binary", "unary", "pool2d", "reduce"]
    + ["batchnorm", "norm_rows", "softmax"]
)
#: ... and those with a <name>_hf variant that also multiplies and adds in float16
#: (options={"metal.fp16_fma": True} or MNN_METAL_FP16_FMA=1)
HALF_FMA_KERNELS = frozenset(["conv2d", "conv_dw", "gemm"])
FP16_FMA_OPTION = "metal.fp16_fma"


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
    wide_bytes: int = 0  # the float32 copies of float16 tensors for ops with no float16 kernels
    half: bool = False  # float32 tensors are stored as float16 in the arena (precision="low")
    widened: tuple = ()  # the ops that ran on such copies

    @property
    def precision(self) -> str:
        """Of the arena's float tensors: "float16" or "float32"."""
        return "float16" if self.half else "float32"


def tensor_bytes(info, half: bool) -> int:
    """A tensor's bytes in the arena, in whole 32-bit words (the kernels, Vulkan's shaders,
    read and write words); float32 tensors take 2 bytes an element under float16 storage."""
    nbytes = info.size * 2 if half and str(info.dtype) == "float32" else info.nbytes
    return -(-nbytes // 4) * 4


class Recorder:
    def __init__(self, options: dict | None = None, half: bool = False):
        self.options = options or {}
        self.half = half  # float tensors are float16 in the arena (MetalArena.half)
        self.half_fma = half and bool(self.options.get(FP16_FMA_OPTION, os.environ.get("MNN_METAL_FP16_FMA") == "1"))
        self.native = True  # the op being recorded has float16 kernels (set per op by begin_op)
        self.dispatches: list[Dispatch] = []
        self._constants: list[tuple[int, np.ndarray]] = []
        self._const_bytes = 0
        self.scratch_bytes = 0
        self.wide_bytes = 0
        self._wide_used = 0
        self._widened: dict = {}
        self._narrow: list = []
        self.widened_ops: list[str] = []
        self.op_name = ""

    # -- bindings -----------------------------------------------------------------------

    def is_half(self, ref) -> bool:
        """Whether a tensor of the segment is stored as float16."""
        return self.half and str(ref.info.dtype) == "float32"

    def tensor(self, ref) -> Binding:
        """A tensor of the arena read by the dispatch: a float32 copy of a float16 tensor
        for an op with no float16 kernels."""
        arena = Binding(ARENA, ref.offset, tensor_bytes(ref.info, self.half))
        if self.native or not self.is_half(ref):
            return arena
        key = (ref.offset, ref.info.size)
        if key not in self._widened:
            wide = self._wide(ref.info.size * 4)
            copy = Binding(WIDE, wide.offset, wide.nbytes, written=True)
            self.elementwise("widen", [arena, copy], pack(ref.info.size), ref.info.size)
            self._widened[key] = wide
        return self._widened[key]

    def output(self, ref) -> Binding:
        arena = Binding(ARENA, ref.offset, tensor_bytes(ref.info, self.half), written=True)
        if self.native or not self.is_half(ref):
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
        """Narrow the float32 outputs of an op with no float16 kernels into the arena."""
        narrow, self._narrow = self._narrow, []
        if self._widened or narrow:
            self.widened_ops.append(self.op_name)
        self.native = True
        for wide, arena, size in narrow:
            self.elementwise("narrow", [wide, arena], pack(size), size)
        self._wide_used = 0
        self._widened.clear()

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
        if self.half and self.native and kernel in HALF_KERNELS:
            kernel += "_hf" if self.half_fma and kernel in HALF_FMA_KERNELS else "_h"
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
        return SegmentPlan(
            self.dispatches, bytes(blob), self.scratch_bytes, self.wide_bytes, self.half, tuple(self.widened_ops)
        )

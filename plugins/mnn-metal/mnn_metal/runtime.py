"""The macOS side: the arena and the recorded program, over the native module _metal.

Untested in this repository's CI (no Mac there); see the README. Everything
here only resolves a SegmentPlan (recorder.py) into native objects: the
planning itself is tested on Linux.
"""

from __future__ import annotations

import ctypes

import numpy as np

from mnn_core.backend.kit.arena import PAD, DeviceArena
from mnn_core.errors import BackendError

from . import msl
from .recorder import ARENA, CONSTANTS, SCRATCH, WIDE, SegmentPlan

_CONTEXT = None


def context():
    """The process's Metal context (device, queue, compiled kernels), made on first use."""
    global _CONTEXT
    if _CONTEXT is None:
        from .device import unavailable_reason

        reason = unavailable_reason()  # before importing _metal: off macOS there is none
        if reason:
            raise BackendError(f"metal: {reason}")
        from . import _metal

        _CONTEXT = _metal.Context()
    return _CONTEXT


class MetalArena(DeviceArena):
    """The plan's tensors in one shared-storage MTLBuffer (unified memory on Apple GPUs,
    so host copies are memcpy through its contents pointer), made at once on the process's
    context. With `half` (precision="low", see recorder.py) float32 tensors are stored as
    float16: host copies of float32 arrays narrow and widen while copying, in C."""

    api = "Metal"

    def __init__(self, nbytes: int, half: bool = False):
        ctx = context()  # first: it says why when Metal is unavailable
        from . import _metal

        super().__init__(nbytes, half)
        self._attach(_metal.Buffer(ctx, nbytes + PAD), ctx)

    def view(self, offset: int, info) -> np.ndarray:
        """A numpy view of a tensor (shared storage is host-visible), for Python executions
        on this domain; valid only between runs, while no command buffer is in flight."""
        if self.half and np.dtype(info.dtype) == np.float32:
            raise NotImplementedError('float tensors are stored as float16 here (precision="low")')
        if offset < 0 or offset + info.nbytes > self.buffer.nbytes:
            raise BackendError(f"metal arena: bytes [{offset}, {offset + info.nbytes}) outside {self.buffer.nbytes}")
        raw = (ctypes.c_char * info.nbytes).from_address(self.buffer.address + offset)
        return np.frombuffer(raw, dtype=info.dtype).reshape(info.shape)


_PIPELINES: dict = {}


def pipeline(dispatch):
    """The compute pipeline of a dispatch's kernel with its constants (cached per process)."""
    key = (
        dispatch.kernel,
        tuple(sorted(dispatch.function_constants().items())),
        tuple(sorted(dispatch.macros().items())),
    )
    if key not in _PIPELINES:
        _PIPELINES[key] = context().pipeline(msl.source(dispatch.kernel), dispatch.function, dict(key[1]), dict(key[2]))
    return _PIPELINES[key]


def build_program(plan: SegmentPlan, arena: MetalArena):
    """A _metal.Program: the plan's dispatches resolved to buffers, offsets and pipelines."""
    ctx = context()  # first: it says why when Metal is unavailable
    from . import _metal

    if plan.half != arena.half:
        raise BackendError(
            f"metal: a plan for {plan.precision} tensors on an arena of "
            f"{'float16' if arena.half else 'float32'} ones; plan with plan_segment(..., half=arena.half)"
        )
    buffers = {ARENA: arena.buffer, CONSTANTS: None, SCRATCH: None, WIDE: None}
    if plan.constants:
        buffers[CONSTANTS] = _metal.Buffer(ctx, len(plan.constants))
        buffers[CONSTANTS].write(0, np.frombuffer(plan.constants, dtype=np.uint8))
    if plan.scratch_bytes:
        buffers[SCRATCH] = _metal.Buffer(ctx, plan.scratch_bytes)
    if plan.wide_bytes:
        buffers[WIDE] = _metal.Buffer(ctx, plan.wide_bytes)
    program = _metal.Program(ctx)
    for d in plan.dispatches:
        bindings = [(buffers[b.buffer], b.offset) for b in d.bindings]
        program.dispatch(pipeline(d), bindings, d.params, d.grid, d.threadgroup, d.op)
    program.keep(buffers)  # the constant, scratch and wide buffers live as long as the program
    return program

"""fp16 activations: under precision="low" (on a CPU with asimdhp) mnn-arm keeps
every float tensor of its ops in half precision, in its own memory domain.

This is the core's contract for device memory (as mnn-vulkan uses it for its
fp16 storage): `Backend.memory_domain_for(ctx)` names the domain,
`tensor_nbytes(info, ctx)` sizes a float32 tensor at 2 bytes an element and
`allocate_arena(nbytes, ctx)` returns a `HalfArena`, host memory whose
`write` / `read` convert fp32 <-> fp16. The scheduler inserts those copies only
where a tensor enters or leaves the domain (graph inputs and outputs, ops that
fell back to another backend), so between two mnn-arm ops nothing converts:
the convolutions, GEMMs, element-wise ops and activations read and write fp16
(the "fp16h" kernels). Ops without an fp16 kernel run their fp32 kernel on
widened copies (`widen`), inside the domain.

Descriptors of float32 tensors in this domain keep dtype float32 (the graph's
type); their bytes are fp16. Session option "arm.fp16_activations": False (or
MNN_ARM_FP16_ACTIVATIONS=0) keeps fp32 tensors in host memory with fp16
arithmetic inside each op, as before.
"""

from __future__ import annotations

import os

import numpy as np

from mnn_core.backend import Arena, PrepareContext

from . import paths

DOMAIN = "arm.fp16"
OPTION = "arm.fp16_activations"
ENV_VAR = "MNN_ARM_FP16_ACTIVATIONS"
ALIGN = 64


def half_activations(ctx: PrepareContext | None) -> bool:
    """Whether a session keeps its float activations in fp16: precision="low" on the fp16 path."""
    if ctx is None or ctx.precision != "low":
        return False
    setting = (ctx.options or {}).get(OPTION, os.environ.get(ENV_VAR, "1"))
    if str(setting).strip().lower() in ("0", "false", "no", "off"):
        return False
    return paths.float_path(ctx.precision, ctx.options) == "fp16"


def stored_half(info) -> bool:
    return info is not None and str(info.dtype) == "float32"


def nbytes(info) -> int:
    return int(info.size) * 2 if stored_half(info) else int(info.nbytes)


class HalfArena(Arena):
    """The fp16 domain's memory: one aligned host buffer; float32 tensors are stored as fp16."""

    def __init__(self, nbytes: int):
        super().__init__(nbytes)
        raw = np.zeros(nbytes + ALIGN, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGN
        self.buf = raw[start : start + nbytes]
        self.handle = int(self.buf.ctypes.data)

    def write(self, offset: int, array: np.ndarray) -> None:
        from . import _arm

        a = np.ascontiguousarray(array)
        if a.dtype == np.float32:
            self._check(offset, a.size * 2)
            _arm.f32_to_f16(a.ctypes.data, self.handle + offset, a.size)
        else:
            self._check(offset, a.nbytes)
            self.buf[offset : offset + a.nbytes] = a.reshape(-1).view(np.uint8)

    def read(self, offset: int, out: np.ndarray) -> None:
        from . import _arm

        if out.dtype == np.float32 and out.flags.c_contiguous:
            self._check(offset, out.size * 2)
            _arm.f16_to_f32(self.handle + offset, out.ctypes.data, out.size)
            return
        dtype = np.float16 if out.dtype == np.float32 else out.dtype
        count = out.size
        self._check(offset, count * np.dtype(dtype).itemsize)
        out[...] = np.frombuffer(self.buf, dtype=dtype, count=count, offset=offset).reshape(out.shape)

    def view(self, offset: int, info) -> np.ndarray:
        if stored_half(info):
            raise NotImplementedError("float32 tensors of mnn-arm's fp16 domain are stored as float16")
        return np.ndarray(tuple(info.shape), dtype=info.dtype, buffer=self.buf, offset=offset)

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or offset + size > self.nbytes:
            raise ValueError(f"arm fp16 arena: {size} bytes at offset {offset} overrun its {self.nbytes} bytes")


def widen(execution, ins, outs):
    """An fp32 execution run on this domain's tensors: fp16 ones widened on the way in, narrowed on the way
    out (the core passes only present inputs)."""
    from . import _arm

    def numel(info):
        return int(info.size) if stored_half(info) else -1

    return _arm.widened(execution, [numel(i) for i in ins if i is not None], [numel(o) for o in outs])

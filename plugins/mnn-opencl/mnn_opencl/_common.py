"""What the op modules share: the kernel table they register into (mnn_core.backend's KernelTable),
the codes that mirror kernels/common.cl (its fused activations are abi.h's mnn_activation), stride
helpers, and the Builder an op uses to record its launches."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from mnn_core.backend import KernelTable, SegmentOp
from mnn_core.backend.kit import layout as kit_layout
from mnn_core.backend.kit.activation import ACT_CODES
from mnn_core.backend.kit.activation import activation_code as fused_activation
from mnn_core.backend.kit.layout import contiguous_strides, numel

__all__ = [
    "ACT_CODES",
    "KERNELS",
    "MATH_CODES",
    "Builder",
    "T",
    "broadcast_strides",
    "collapse",
    "contiguous_strides",
    "full_attrs",
    "fused_activation",
    "int8",
    "kernel",
    "numel",
]

#: the unary math ops, as in kernels/common.cl `activate` (after the fused activations, ACT_CODES)
MATH_CODES = {
    "Exp": 20,
    "Log": 21,
    "Sqrt": 22,
    "Neg": 23,
    "Abs": 24,
    "Reciprocal": 25,
    "Erf": 26,
    "Floor": 27,
    "Ceil": 28,
    "Sin": 29,
    "Cos": 30,
    "Softplus": 31,
    "Identity": 0,
}

MAX_DIMS = 8  # the int8 shape/stride arguments of the strided kernels
INT_MAX = 2**31 - 1

#: a kernel's impl: build(op, builder) records the launches of one op
BuildFn = Callable[[SegmentOp, "Builder"], None]

#: op name -> Kernel; filled by the op modules when they are imported
KERNELS = KernelTable()
#: the decorator @kernel(op, **KernelSpec fields) registering a build function
kernel = KERNELS.kernel


def full_attrs(node) -> dict:
    from mnn_core.ops import get_schema

    return get_schema(node.op).check_attrs(node.attrs, node.name)


def broadcast_strides(shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """Strides of `shape` (contiguous) over `out_shape` under numpy broadcasting: 0 where broadcast."""
    pad = len(out_shape) - len(shape)
    own = contiguous_strides(shape)
    return [0 if i < pad or shape[i - pad] == 1 else own[i - pad] for i in range(len(out_shape))]


def collapse(shape: Sequence[int], *strides: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """mnn_core.backend.kit.layout.collapse, but a shape of all ones stays one dim (the kernels take >= 1)."""
    dims, merged = kit_layout.collapse([int(d) for d in shape], *([int(v) for v in st] for st in strides))
    return (dims, merged) if dims else ([1], [[0] for _ in strides])


def int8(values: Sequence[int]) -> tuple:
    """Pad to the 8 lanes of an OpenCL int8 argument."""
    values = [int(v) for v in values]
    if len(values) > MAX_DIMS:
        raise ValueError(f"{len(values)} dims exceed the {MAX_DIMS} of the strided kernels")
    return tuple(values + [0] * (MAX_DIMS - len(values)))


@dataclass(frozen=True)
class T:
    """A tensor argument: a buffer and an element offset into it (two kernel arguments)."""

    buffer: object
    offset: int


@dataclass
class Launch:
    kernel: object  # _cl.Kernel, arguments set
    gws: tuple  # the work size the op needs (before rounding up to the work-group size)
    lws: tuple | None
    key: str  # what tuning results are cached under: kernel name + shape parameters
    tunable: bool = True

    @property
    def rounded_gws(self) -> tuple:
        if self.lws is None:
            return self.gws
        return tuple(-(-g // w) * w for g, w in zip(self.gws, self.lws))


@dataclass
class Builder:
    """Records the launches of one segment: what an op's build function calls."""

    runtime: object  # runtime.Runtime
    program: object  # _cl.Program
    arena: object  # arena.OpenCLArena
    precision: str  # "float32" | "float16": the compute type the program was built for
    launches: list = field(default_factory=list)
    setup: list = field(default_factory=list)  # launches run once, at resize (weight packing)
    keep: list = field(default_factory=list)  # private buffers the launches use
    pending: list = field(default_factory=list)  # launches an op records after its main one
    options: dict = field(default_factory=dict)  # the session's options (opencl.*)

    def tensor(self, ref) -> T:
        """The kernel argument of a segment tensor (TensorRef) in the arena."""
        size = np.dtype(ref.info.dtype).itemsize
        if ref.offset < 0 or ref.offset % size:
            raise ValueError(f"tensor {ref.name} has no element-aligned place in the arena (offset {ref.offset})")
        return T(self.arena.buffer, ref.offset // size)

    def upload(self, array: np.ndarray) -> T:
        """A private read-only device copy of a small host array (tables, offsets)."""
        array = np.ascontiguousarray(array)
        buf = self.runtime.context.buffer(max(array.nbytes, 4))
        buf.write(0, array, True)
        self.keep.append(buf)
        return T(buf, 0)

    def scratch(self, nbytes: int) -> T:
        buf = self.runtime.context.buffer(max(int(nbytes), 4))
        self.keep.append(buf)
        return T(buf, 0)

    def launch(
        self,
        name: str,
        args: Sequence,
        gws: Sequence[int],
        lws: Sequence[int] | None = None,
        once: bool = False,
        tunable: bool = True,
    ) -> None:
        """Record kernel `name` with `args` (T expands to buffer + offset) over `gws`.
        `once`: run at resize only (e.g. packing constant weights)."""
        gws = tuple(int(g) for g in gws)
        if min(gws) <= 0:
            return  # an empty tensor: nothing to do
        flat, shape_key = [], []
        for a in args:
            if isinstance(a, T):
                flat += [a.buffer, int(a.offset)]
            else:
                flat.append(a)
                if isinstance(a, (int, float, tuple)):
                    shape_key.append(a)
        kern = self.program.kernel(name)
        kern.set_args(*flat)
        if lws is None:
            lws = self.runtime.default_lws(name, gws, kern)
        digest = hashlib.sha1(repr(shape_key).encode()).hexdigest()[:10]
        key = f"{name}|{','.join(map(str, gws))}|{digest}"
        target = self.setup if once else self.launches
        target.append(Launch(kern, gws, tuple(lws) if lws is not None else None, key, tunable and not once))

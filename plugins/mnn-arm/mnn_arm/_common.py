"""What the op modules share: the kernel table they register into (mnn_core.backend's KernelTable)
and the fused-activation codes (abi.h's enum mnn_activation, which the C kernels switch on)."""

from __future__ import annotations

from typing import Callable

from mnn_core.backend import KernelSpec, KernelTable
from mnn_core.backend.kit.activation import ACT_CODES
from mnn_core.backend.kit.activation import activation_code as fused_activation
from mnn_core.backend.kit.layout import numel as prod
from mnn_core.backend.kit.layout import static_shape

__all__ = [
    "ACT_CODES",
    "HALF_NATIVE",
    "KERNELS",
    "PrepareFn",
    "fused_activation",
    "kernel",
    "prod",
    "register",
    "static_shape",
]

#: a kernel's impl: prepare(node, ins, outs, constants, ctx) -> an _arm.Execution
PrepareFn = Callable[..., object]

#: op name -> Kernel; filled by the op modules when they are imported
KERNELS = KernelTable()
#: the ops whose prepare handles fp16-domain tensors itself (half.py); the backend widens the others
HALF_NATIVE: set[str] = set()


def register(spec: KernelSpec, prepare: PrepareFn, half_native: bool = False) -> None:
    KERNELS.add(spec, prepare)
    if half_native:
        HALF_NATIVE.add(spec.op)


def kernel(op: str, half_native: bool = False, **spec_fields):
    """Decorator: register the decorated prepare function as the kernel of `op`."""

    def wrap(fn: PrepareFn) -> PrepareFn:
        register(KernelSpec(op, **spec_fields), fn, half_native)
        return fn

    return wrap

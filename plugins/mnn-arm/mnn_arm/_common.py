"""What the op modules share: the kernel table they register into and the
activation codes of csrc/arm.h."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mnn_core.backend import KernelSpec

#: enum arm_act in csrc/arm.h
ACT_CODES = {"none": 0, "relu": 1, "clip": 2, "leaky_relu": 3, "sigmoid": 4, "silu": 5, "gelu": 6, "tanh": 7,
             "hard_sigmoid": 8, "hard_swish": 9}

#: prepare(node, ins, outs, constants, ctx) -> an _arm.Execution
PrepareFn = Callable[..., object]


@dataclass(frozen=True)
class Kernel:
    spec: KernelSpec
    prepare: PrepareFn
    #: its prepare handles fp16-domain tensors itself (half.py); else the backend widens it
    half_native: bool = False


KERNELS: dict[str, Kernel] = {}


def register(spec: KernelSpec, prepare: PrepareFn, half_native: bool = False) -> None:
    KERNELS[spec.op] = Kernel(spec, prepare, half_native)


def kernel(op: str, half_native: bool = False, **spec_fields):
    def wrap(fn: PrepareFn) -> PrepareFn:
        register(KernelSpec(op, **spec_fields), fn, half_native)
        return fn

    return wrap


def fused_activation(attrs: dict) -> tuple[int, float, float]:
    kind = attrs.get("activation", "none")
    return ACT_CODES[kind], float(attrs.get("act_alpha", 0.0)), float(attrs.get("act_beta", 0.0))


def static_shape(info) -> tuple[int, ...]:
    return tuple(int(d) for d in info.shape)


def prod(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n

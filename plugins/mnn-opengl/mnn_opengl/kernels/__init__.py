"""The OpenGL kernels: one op family per module, each registering its ops here.

A kernel is a KernelSpec (what it takes, as data, with a `supports` check that
names what it declines) and a `record(op, rec)` function that turns one
SegmentOp into dispatches on a Recorder. Only float32 tensors: the arena is
read as float words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mnn_core.backend import KernelSpec

from ..recorder import MAX_ELEMENTS

F32 = ("float32",)


@dataclass(frozen=True)
class OpenGLKernel:
    spec: KernelSpec
    record: Callable


KERNELS: dict[str, OpenGLKernel] = {}


def _guarded(supports):
    """Decline tensors the shaders cannot address with 32-bit signed indices."""

    def check(node, ins):
        for info in ins:
            if info is not None and info.size > MAX_ELEMENTS // 2:
                return f"a tensor of {info.size} elements exceeds the 32-bit indexing of the shaders"
        return True if supports is None else supports(node, ins)

    return check


def register(
    op: str, record: Callable, supports=None, dtypes=F32, inplace: bool = False, efficiency: float = 0.5
) -> None:
    KERNELS[op] = OpenGLKernel(
        KernelSpec(op, dtypes, inplace=inplace, supports=_guarded(supports), efficiency=efficiency), record
    )


def activation(attrs: dict) -> list:
    """The fused activation as act.glsl's code and its two float parameters."""
    from mnn_core.ops.elementwise import ACTIVATIONS

    return [
        ACTIVATIONS.index(attrs.get("activation", "none")),
        float(attrs.get("act_alpha", 0.0)),
        float(attrs.get("act_beta", 0.0)),
    ]


def contiguous_strides(dims) -> list[int]:
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def collapse(dims, *strides):
    """Drop size-1 dims and merge neighbours that are contiguous in every stride list."""
    kept = [(d, [s[i] for s in strides]) for i, d in enumerate(dims) if d != 1]
    out: list = []
    for d, st in kept:
        if out and all(prev == cur * d for prev, cur in zip(out[-1][1], st)):
            out[-1] = (out[-1][0] * d, st)
        else:
            out.append((d, st))
    return [d for d, _ in out], [[st[k] for _, st in out] for k in range(len(strides))]


def pad_to(values, n: int, fill=0) -> list:
    return list(values) + [fill] * (n - len(values))


def numel(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


from . import conv, eltwise, matmul, norm, pool, reduce, resize, shape  # noqa: E402,F401  (registration)

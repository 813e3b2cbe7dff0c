"""A backend's kernel table: op -> (KernelSpec, record function), with the check
every shader-based backend needs first (tensors its 32-bit indices can address)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mnn_core.backend import KernelSpec

F32 = ("float32",)


@dataclass(frozen=True)
class GpuKernel:
    spec: KernelSpec
    record: Callable  # record(op: SegmentOp, rec: the backend's recorder)


class KernelTable(dict):
    """op name -> GpuKernel. `max_elements`: the largest tensor the shaders index;
    `extra_check(info)`, when given, returns a reason to decline a tensor, or None;
    `programs` names the backend's programs in that reason ("shaders", "kernels")."""

    def __init__(self, max_elements: int, extra_check: Callable | None = None, programs: str = "shaders"):
        super().__init__()
        self.max_elements = max_elements
        self.extra_check = extra_check
        self.programs = programs

    def guarded(self, supports):
        """`supports` (or None: all), after declining tensors the shaders cannot address."""

        def check(node, ins):
            for info in ins:
                if info is not None and info.size > self.max_elements:
                    return f"a tensor of {info.size} elements exceeds the 32-bit indexing of the {self.programs}"
                reason = self.extra_check(info) if info is not None and self.extra_check else None
                if reason:
                    return reason
            return True if supports is None else supports(node, ins)

        return check

    def register(
        self, op: str, record: Callable, supports=None, dtypes=F32, inplace: bool = False, efficiency: float = 0.5
    ) -> None:
        spec = KernelSpec(op, dtypes, inplace=inplace, supports=self.guarded(supports), efficiency=efficiency)
        self[op] = GpuKernel(spec, record)

"""The kernel table of a shader backend: the one KernelTable (mnn_core.backend.kernels), guarded by
the check every shader-based backend needs first (tensors its 32-bit indices can address), with a
`register` whose defaults suit shaders (float32, half of peak)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..api import KernelSpec, SupportFn
from ..kernels import Kernel, KernelTable
from .codes import BINARY

if TYPE_CHECKING:
    from ...graph.ir import TensorInfo

F32 = ("float32",)
INTEGER_AND_F32 = ("float32", "int32", "int64")

#: the old name of a shader backend's table entry: `impl` is its record(op: SegmentOp, rec) function
GpuKernel = Kernel


class GpuKernelTable(KernelTable):
    """op name -> Kernel whose impl is record(op, rec). `max_elements`: the largest tensor the
    shaders index; `extra_check(info)`, when given, returns a reason to decline a tensor, or None;
    `programs` names the backend's programs in that reason ("shaders", "kernels")."""

    def __init__(self, max_elements: int, extra_check: Callable | None = None, programs: str = "shaders") -> None:
        super().__init__(self._addressable)
        self.max_elements = max_elements
        self.extra_check = extra_check
        self.programs = programs

    def _addressable(self, info: TensorInfo) -> str | None:
        if info.size > self.max_elements:
            return f"a tensor of {info.size} elements exceeds the 32-bit indexing of the {self.programs}"
        return self.extra_check(info) if self.extra_check else None

    def register(
        self,
        op: str,
        record: Callable,
        supports: SupportFn | None = None,
        dtypes: tuple[str, ...] = F32,
        inplace: bool = False,
        efficiency: float = 0.5,
    ) -> None:
        self.add(KernelSpec(op, dtypes, inplace=inplace, supports=supports, efficiency=efficiency), record)

    def register_views(self, record: Callable, bytes_too: tuple[str, ...] = ("bool", "uint8", "int8")) -> None:
        """Reshape, Flatten, Squeeze and Unsqueeze (in place) and Identity: views of 32-bit words or bytes."""
        dtypes = INTEGER_AND_F32 + bytes_too
        for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
            self.register(op, record, dtypes=dtypes, inplace=True, efficiency=1.0)
        self.register("Identity", record, dtypes=dtypes, efficiency=1.0)

    def register_binary(self, record: Callable, supports: SupportFn | None = None) -> None:
        """Every kit.codes.BINARY op: float32, int32 and int64 operands; PRelu may write in place."""
        for op in BINARY:
            self.register(op, record, supports, dtypes=INTEGER_AND_F32, inplace=op == "PRelu", efficiency=0.8)

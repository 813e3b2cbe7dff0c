"""A backend's kernel table: op name -> `Kernel`, filled by the backend's op modules as they import
(each kernel registers itself at the bottom of its own file), read once by `Backend.kernels()`.

    KERNELS = KernelTable()

    @KERNELS.kernel("Relu", inplace=True)
    def prepare_relu(node, ins, outs, constants, ctx): ...

    class MyBackend(Backend):
        def kernels(self):
            return KERNELS.specs()

        def prepare(self, node, ins, outs, constants, ctx):
            return KERNELS[node.op].impl(node, ins, outs, constants, ctx)

What `impl` takes is the backend's own business (a CPU backend's prepare function, a GPU backend's
record function); the core reads only the specs. A `guard` declines tensors a backend can never run
before the kernel's own `supports` is asked (a shader backend's 32-bit indexing: kit/gpu_kernels.py).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, replace

from ..graph.ir import Node, TensorInfo
from .api import KernelSpec, SupportFn

#: guard(info) -> why the backend cannot take this tensor, or None
GuardFn = Callable[[TensorInfo], "str | None"]


@dataclass(frozen=True)
class Kernel:
    """One op of a backend: what the core reads (`spec`) and what the backend calls for it (`impl`)."""

    spec: KernelSpec
    impl: Callable


class KernelTable(dict):
    """op name -> Kernel. `guard`, when given, is asked about every input tensor of an op before its
    kernel's own `supports`."""

    def __init__(self, guard: GuardFn | None = None) -> None:
        super().__init__()
        self.guard = guard

    def add(self, spec: KernelSpec, impl: Callable) -> Kernel:
        """Register `impl` as the kernel of `spec.op` (a later registration of the op replaces it)."""
        if self.guard is not None:
            spec = replace(spec, supports=self.guarded(spec.supports))
        self[spec.op] = kernel = Kernel(spec, impl)
        return kernel

    def kernel(self, op: str, **spec_fields: object) -> Callable[[Callable], Callable]:
        """Decorator: register the decorated function as the kernel of `op`; `spec_fields` are
        KernelSpec's (dtypes, supports, inplace, efficiency, ...)."""

        def wrap(fn: Callable) -> Callable:
            self.add(KernelSpec(op, **spec_fields), fn)
            return fn

        return wrap

    def guarded(self, supports: SupportFn | None) -> SupportFn:
        """`supports` (None: every node), after the table's guard has passed every input tensor."""
        guard = self.guard

        def check(node: Node, ins: Sequence) -> bool | str:
            for info in ins:
                reason = guard(info) if info is not None and guard is not None else None
                if reason:
                    return reason
            return True if supports is None else supports(node, ins)

        return check

    def specs(self, known: Container[str] | None = None) -> dict[str, KernelSpec]:
        """{op: KernelSpec}, what `Backend.kernels()` returns; `known`: only these ops (the op
        schemas of the running core, so a backend newer than its core offers no op it lacks)."""
        return {op: k.spec for op, k in self.items() if known is None or op in known}

"""What every GPU backend that prepares whole segments (runs of consecutive ops recorded as one
program) writes the same way: availability from one reason, a placeholder device where there is
none, the kernels its table holds for ops this core knows, a clear error for a single op, and the
name of a prepared segment."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...errors import BackendError
from ..api import Availability, Backend, DeviceInfo

if TYPE_CHECKING:
    from ..api import KernelSpec, SegmentOp
    from ..kernels import Kernel


class SegmentBackend(Backend):
    """A Backend whose `prepare_segment` does the work. A subclass sets `kernel_table` (op -> Kernel;
    empty where its compiled part failed to load) and implements `unavailable_reason()` and
    `device_info()`, the latter raising BackendError where no device can be used."""

    kernel_table: Mapping[str, Kernel] = {}

    def unavailable_reason(self) -> str | None:
        """Why the backend cannot run here, or None."""
        raise NotImplementedError

    def device_info(self) -> DeviceInfo:
        """The device a session gets by default."""
        raise NotImplementedError

    def availability(self) -> Availability:
        reason = self.unavailable_reason()
        return Availability(not reason, reason)

    def devices(self) -> list[DeviceInfo]:
        try:
            return [self.device_info()]
        except BackendError:
            return [DeviceInfo(f"{self.name} (unavailable)", kind="gpu")]

    def kernels(self) -> dict[str, KernelSpec]:
        from ...ops import all_schemas  # the op schemas load on first use, not with the kit

        known = all_schemas()
        return {op: k.spec for op, k in self.kernel_table.items() if op in known}

    def prepare(self, node: Any, ins: Any, outs: Any, constants: Any, ctx: Any) -> Any:  # noqa: ANN401
        raise BackendError(f"the {self.name} backend prepares whole segments (prepare_segment), not single ops")


def segment_name(backend: str, ops: Sequence[SegmentOp]) -> str:
    """ "<backend>:<first op>..<last op>", the name a segment's execution and profile carry."""
    return f"{backend}:{ops[0].node.name}..{ops[-1].node.name}" if ops else f"{backend}:empty"


def load_native(package: str, module: str, plugin: str) -> tuple[ModuleType | None, str]:
    """(package.module, "") or, where the compiled module fails to load (a broken install), (None,
    why, and what to do): importing the plugin still works, and its availability() says why not."""
    try:
        return importlib.import_module(f"{package}.{module}"), ""
    except ImportError as exc:
        return None, f"the compiled runtime failed to load ({type(exc).__name__}: {exc}); reinstall {plugin}"

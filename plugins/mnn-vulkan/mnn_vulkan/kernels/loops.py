"""lavapipe's loop budget (mnn_core.backend.kit.loops) for the default Vulkan device: lavapipe
names itself "llvmpipe (LLVM ...)" and shares llvmpipe's shader compiler and its limit."""

from __future__ import annotations

from mnn_core.backend.kit.loops import LoopBudget
from mnn_core.errors import BackendError

from ..device import choose


def _device_name() -> str | None:
    try:
        return choose().name
    except BackendError:
        return None


BUDGET = LoopBudget(_device_name)
loop_budget = BUDGET.passes
within_budget = BUDGET.within
budgeted = BUDGET.budgeted

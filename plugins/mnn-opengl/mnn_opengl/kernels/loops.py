"""llvmpipe's loop budget (mnn_core.backend.kit.loops) for the default OpenGL renderer."""

from __future__ import annotations

from mnn_core.backend.kit.loops import LLVMPIPE_LOOP_PASSES, LoopBudget, group_passes, group_size
from mnn_core.errors import BackendError

from ..device import open_device


def _renderer() -> str | None:
    try:
        return open_device().props["renderer"]
    except BackendError:
        return None


BUDGET = LoopBudget(_renderer)
loop_budget = BUDGET.passes
within_budget = BUDGET.within
budgeted = BUDGET.budgeted

__all__ = ["LLVMPIPE_LOOP_PASSES", "budgeted", "group_passes", "group_size", "loop_budget", "within_budget"]

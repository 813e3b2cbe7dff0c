"""llvmpipe's loop budget (mnn_core.backend.kit.loops) for the default OpenGL renderer."""

from __future__ import annotations

from mnn_core.backend.kit.loops import LLVMPIPE_LOOP_PASSES, LoopBudget, group_passes, group_size

from ..device import open_device

BUDGET = LoopBudget(lambda: open_device().props["renderer"])
loop_budget, within_budget, budgeted = BUDGET.passes, BUDGET.within, BUDGET.budgeted

__all__ = ["LLVMPIPE_LOOP_PASSES", "budgeted", "group_passes", "group_size", "loop_budget", "within_budget"]

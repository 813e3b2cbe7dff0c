"""lavapipe's loop budget (mnn_core.backend.kit.loops) for the default Vulkan device: lavapipe
names itself "llvmpipe (LLVM ...)" and shares llvmpipe's shader compiler and its limit."""

from __future__ import annotations

from mnn_core.backend.kit.loops import LoopBudget

from ..device import choose

BUDGET = LoopBudget(lambda: choose().name)
loop_budget, within_budget, budgeted = BUDGET.passes, BUDGET.within, BUDGET.budgeted

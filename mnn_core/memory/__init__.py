"""Memory planning: tensor lifetimes, in-place aliasing, one arena per domain."""

from __future__ import annotations

from .planner import ArenaPlan, MemoryReport, plan_arena

__all__ = ["ArenaPlan", "MemoryReport", "plan_arena"]

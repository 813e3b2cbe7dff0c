"""What a plan records. Plan: where every op runs and why, the copies between memory domains, the
ops with no step of their own, the backend-private layouts and fusions (what `Session.plan` prints).
Slot: where one value lives in a plan. PreparedPlan: everything Session.resize produced for one set of
input shapes, the compiled Program and the arenas it runs in included (program.py builds it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..graph.ir import Graph, TensorInfo
from ..memory.planner import MemoryReport
from ._runloop import Program
from .scheduler import Placement


@dataclass
class Plan:
    """Where every op runs and why, plus the copies between domains."""

    placements: list[Placement]
    copies: list[str] = field(default_factory=list)
    elided: list[str] = field(default_factory=list)
    layouts: dict[str, int] = field(default_factory=dict)  # value -> layout code its backend chose
    fused: dict[str, list[str]] = field(default_factory=dict)  # fused node -> the nodes it runs (fusion.py)

    def __iter__(self):
        return iter(self.placements)

    def __len__(self) -> int:
        return len(self.placements)

    def backends(self) -> dict[str, int]:
        count: dict[str, int] = {}
        for p in self.placements:
            count[p.backend] = count.get(p.backend, 0) + 1
        return count

    def to_dict(self) -> dict:
        return {
            "placements": [p.__dict__ for p in self.placements],
            "copies": list(self.copies),
            "elided": list(self.elided),
            "layouts": dict(self.layouts),
            "fused": {k: list(v) for k, v in self.fused.items()},
        }

    def __str__(self) -> str:
        rows = [("node", "op", "backend", "est ms", "why")]
        rows += [(p.node, p.op, p.backend, f"{p.est_ms:.4f}", p.reason) for p in self.placements]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
        if self.copies:
            lines.append(f"copies between memory domains: {', '.join(self.copies)}")
        if self.elided:
            lines.append(
                f"no step (views alias their input; concatenations are written in place): {', '.join(self.elided)}"
            )
        if self.fused:
            fused = (f"{k} ({' + '.join(v)})" for k, v in self.fused.items())
            lines.append("fused by their backend: " + ", ".join(fused))
        if self.layouts:
            lines.append("backend-private layouts: " + ", ".join(f"{v} ({c})" for v, c in self.layouts.items()))
        return "\n".join(lines)


@dataclass
class Slot:
    """Where one value lives for this plan."""

    domain: str
    info: TensorInfo
    offset: int = -1  # in the domain's arena; -1: outside (a constant)
    constant: np.ndarray | None = None
    nbytes: int = 0  # its size in the arena
    name: str = ""  # the value's name


class PreparedPlan:
    """Everything resize produced for one set of input shapes."""

    def __init__(self):
        self.program: Program | None = None
        self.plan: Plan | None = None
        self.memory: dict[str, MemoryReport] = {}
        self.arenas: dict[str, Any] = {}
        self.input_views: dict[str, np.ndarray] = {}
        self.output_views: dict[str, np.ndarray] = {}
        self.infos: dict[str, TensorInfo] = {}
        self.values: dict[str, np.ndarray] = {}  # the values of Session.value_inputs it was planned for
        self.graph: Graph | None = None  # the graph at these shapes (it owns the constants folded for them)
        self.move_index: dict[str, int] = {}  # movable input -> its position in program.run's `moved`

"""One MNN op as handlers see it, and the handler registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .flatbuf import Table

HANDLERS: dict[str, Callable] = {}


def handles(*types: str):
    def register(fn):
        for t in types:
            HANDLERS[t] = fn
        return fn

    return register


@dataclass
class OpRecord:
    type: str
    param_type: str | None
    param: Table | None
    inputs: list[str]
    outputs: list[str]
    name: str

    def p_scalar(self, index: int, kind: str, default=0):
        return self.param.scalar(index, kind, default) if self.param is not None else default

    def p_ints(self, index: int) -> list[int]:
        return self.param.ints(index, f"{self.name}'s parameter") if self.param is not None else []

    def p_floats(self, index: int) -> np.ndarray | None:
        return self.param.array(index, "float32", f"{self.name}'s parameter") if self.param is not None else None

    def table(self, index: int) -> Table | None:
        return self.param.table(index, f"{self.name}'s parameter") if self.param is not None else None

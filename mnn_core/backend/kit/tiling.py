"""GEMM tile arithmetic (gemm.comp, conv2d.comp: tile.glsl's TM, TN, BK).

A tiling is (local size, (TM, TN, BK)): a work group of TX x TY invocations, each
computing TM x TN outputs, gives a block of TY*TM x TX*TN outputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Callable

from .layout import cdiv


def blocks(local: Sequence[int], spec: Sequence[int]) -> tuple[int, int]:
    """(BM, BN): the output rows and columns one work group of this tiling covers."""
    return local[1] * spec[0], local[0] * spec[1]


def busiest_tile(
    m: int,
    n: int,
    batch: int,
    order: Iterable[tuple[Sequence[int], Sequence[int]]],
    enough: int,
    more: Callable[[int], int] | None = None,
) -> tuple[Sequence[int], Sequence[int], tuple[int, int]]:
    """(local, spec, (BM, BN)): the first tiling of `order` (largest first) that gives at
    least `enough` work groups for an M x N output `batch` times, else the one that gives
    the most. `more(groups)` multiplies a tiling's count (split-K's slices)."""
    best = None
    for local, spec in order:
        bm, bn = blocks(local, spec)
        groups = cdiv(m, bm) * cdiv(n, bn) * batch
        groups *= more(groups) if more is not None else 1
        if groups >= enough:
            return local, spec, (bm, bn)
        if best is None or groups > best[0]:
            best = (groups, local, spec, (bm, bn))
    return best[1:]

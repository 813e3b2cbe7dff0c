"""The random source of express, nn initialization, dropout and data shuffling."""

from __future__ import annotations

import numpy as np

_GENERATOR = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Reseed every random draw of mnn's training API (initialization, dropout, shuffling)."""
    global _GENERATOR
    _GENERATOR = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    return _GENERATOR

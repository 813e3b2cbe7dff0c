"""Transforms on numpy batches (or single items): compose them, pass one to a DataLoader or a dataset."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np


class Compose:
    def __init__(self, transforms: Sequence[Callable]):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class Normalize:
    """(x - mean) / std per channel (axis -3 of a (..., C, H, W) array)."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]):
        self.mean = np.asarray(mean, np.float32).reshape(-1, 1, 1)
        self.std = np.asarray(std, np.float32).reshape(-1, 1, 1)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.std).astype(np.float32)


class RandomHorizontalFlip:
    """Flip each image of a (N, C, H, W) batch left-right with probability p."""

    def __init__(self, p: float = 0.5, seed: int | None = None):
        self.p, self.rng = p, np.random.default_rng(seed)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        flip = self.rng.random(len(x)) < self.p
        out = x.copy()
        out[flip] = out[flip][..., ::-1]
        return out


class Pad:
    """Zero-pad H and W of (..., H, W) arrays by `padding` on every side."""

    def __init__(self, padding: int):
        self.padding = padding

    def __call__(self, x: np.ndarray) -> np.ndarray:
        p = self.padding
        return np.pad(x, [(0, 0)] * (x.ndim - 2) + [(p, p), (p, p)])

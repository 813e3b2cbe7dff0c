"""Small models that tests, examples and benchmarks share, written once so that a comparison between two
of them (mnn against PyTorch, one backend against another) always speaks of the same network."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def lenet(lib: ModuleType | None = None, classes: int = 10) -> Any:
    """LeNet-5 for 1x28x28 images (MNIST), built from `lib`: mnn_core.nn (the default) or torch.nn, whose
    layers share these names, so the two models have the same parameters and state_dict keys.
    Seed the library first (mnn_core.express.manual_seed, torch.manual_seed) for repeatable weights."""
    if lib is None:
        from mnn_core import nn as lib
    return lib.Sequential(
        lib.Conv2d(1, 6, 5, padding=2),
        lib.ReLU(),
        lib.MaxPool2d(2),
        lib.Conv2d(6, 16, 5),
        lib.ReLU(),
        lib.MaxPool2d(2),
        lib.Flatten(),
        lib.Linear(400, 120),
        lib.ReLU(),
        lib.Linear(120, 84),
        lib.ReLU(),
        lib.Linear(84, classes),
    )

"""Optimizers and learning-rate schedules with PyTorch's names.

opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
sched = optim.lr_scheduler.StepLR(opt, step_size=5)
"""

from __future__ import annotations

from . import lr_scheduler
from .adaptive import Adagrad, RMSprop
from .lr_scheduler import (
    CosineAnnealingLR,
    ExponentialLR,
    InvLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    StepLR,
)
from .optimizer import SGD, Adam, AdamW, Optimizer

__all__ = [
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "CosineAnnealingLR",
    "ExponentialLR",
    "InvLR",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "OneCycleLR",
    "Optimizer",
    "RMSprop",
    "ReduceLROnPlateau",
    "StepLR",
    "lr_scheduler",
]

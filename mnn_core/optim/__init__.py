"""Optimizers and learning-rate schedules with PyTorch's names.

    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sched = optim.lr_scheduler.StepLR(opt, step_size=5)
"""

from __future__ import annotations

from . import lr_scheduler
from .lr_scheduler import CosineAnnealingLR, ExponentialLR, InvLR, LambdaLR, MultiStepLR, StepLR
from .optimizer import SGD, Adam, AdamW, Optimizer

__all__ = ["SGD", "Adam", "AdamW", "CosineAnnealingLR", "ExponentialLR", "InvLR", "LambdaLR", "MultiStepLR",
           "Optimizer", "StepLR", "lr_scheduler"]

"""Training and compilation.

step = mnn_core.train.compile_step(model, nn.CrossEntropyLoss(), optimizer)
loss = step(x, y)                      # forward + backward + update as one planned graph
fast = mnn_core.compile(model)         # the forward alone, as torch.compile(model)
"""

from __future__ import annotations

from .forward import CompiledModule
from .step import TrainStep, compile, compile_step  # noqa: A004

__all__ = ["CompiledModule", "TrainStep", "compile", "compile_step"]

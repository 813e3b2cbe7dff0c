"""Training: a compiled step (forward + backward + update in one graph).

step = mnn_core.train.compile(model, nn.CrossEntropyLoss(), optimizer)
loss = step(x, y)
"""

from __future__ import annotations

from .step import TrainStep, compile  # noqa: A004

__all__ = ["TrainStep", "compile"]

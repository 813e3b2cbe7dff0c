"""RMSprop and Adagrad, PyTorch's algorithms, written with express ops.

There is no fused update kernel for these two, so each update is a handful of
elementwise ops: eagerly they dispatch to the backend one by one; inside a
compiled step (Optimizer.update) the same code records them into the graph.
"""

from __future__ import annotations

from ..errors import MnnError
from ..express import assign
from ..express import functional as F
from .optimizer import Optimizer, _state_var


def _state(state: dict, p, name: str, fill: float = 0.0):
    if name not in state:
        state[name] = _state_var(p, name)
        if fill:
            state[name].data[...] = fill
    return state[name]


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2; p -= lr g / (sqrt(v) + eps), with momentum and centering as PyTorch."""

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
    ):
        if not 0.0 <= alpha <= 1.0:
            raise MnnError(f"RMSprop: alpha must be in [0, 1], got {alpha}")
        super().__init__(
            params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered)
        )

    def _update(self, p, g, group, state, lr, step):
        alpha, eps = group["alpha"], group["eps"]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        v = _state(state, p, "square_avg")
        new_v = v * alpha + g * g * (1 - alpha)
        assign(v, new_v)
        if group["centered"]:
            mean = _state(state, p, "grad_avg")
            new_mean = mean * alpha + g * (1 - alpha)
            assign(mean, new_mean)
            denom = F.sqrt(new_v - new_mean * new_mean) + eps
        else:
            denom = F.sqrt(new_v) + eps
        if group["momentum"] > 0:
            buf = _state(state, p, "momentum_buffer")
            new_buf = buf * group["momentum"] + g / denom
            assign(buf, new_buf)
            assign(p, p - new_buf * lr)
        else:
            assign(p, p - g / denom * lr)


class Adagrad(Optimizer):
    """sum += g^2; p -= lr / (1 + (step - 1) lr_decay) * g / (sqrt(sum) + eps)."""

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                eps=eps,
            ),
        )

    def _update(self, p, g, group, state, lr, step):
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        total = _state(state, p, "sum", group["initial_accumulator_value"])
        new_total = total + g * g
        assign(total, new_total)
        if group["lr_decay"]:
            lr = lr / ((step() - 1) * group["lr_decay"] + 1)
        assign(p, p - g / (F.sqrt(new_total) + group["eps"]) * lr)

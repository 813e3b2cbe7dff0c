"""Parameter initialization, as torch.nn.init (in place, from express's random source)."""

from __future__ import annotations

import math

import numpy as np

from ..express import Var
from ..express.rng import generator


def _fill(v: Var, values: np.ndarray) -> Var:
    np.copyto(v.data, values.astype(v.dtype))
    return v


def _fans(shape: tuple) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need a tensor of rank 2 or more, got shape {shape}")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    if nonlinearity in ("linear", "conv2d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}")


def uniform_(v: Var, a: float = 0.0, b: float = 1.0) -> Var:
    return _fill(v, generator().uniform(a, b, v.shape))


def normal_(v: Var, mean: float = 0.0, std: float = 1.0) -> Var:
    return _fill(v, generator().normal(mean, std, v.shape))


def constant_(v: Var, value: float) -> Var:
    return _fill(v, np.full(v.shape, value))


def zeros_(v: Var) -> Var:
    return constant_(v, 0.0)


def ones_(v: Var) -> Var:
    return constant_(v, 1.0)


def kaiming_uniform_(v: Var, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Var:
    fan_in, fan_out = _fans(v.shape)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan) if fan else 0.0
    return uniform_(v, -bound, bound)


def kaiming_normal_(v: Var, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Var:
    fan_in, fan_out = _fans(v.shape)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(v, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan) if fan else 0.0)


def xavier_uniform_(v: Var, gain: float = 1.0) -> Var:
    fan_in, fan_out = _fans(v.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(v, -bound, bound)


def xavier_normal_(v: Var, gain: float = 1.0) -> Var:
    fan_in, fan_out = _fans(v.shape)
    return normal_(v, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def default_weight_and_bias_(weight: Var, bias: Var | None) -> None:
    """PyTorch's default for Linear and Conv: kaiming_uniform(a=sqrt(5)), bias U(-1/sqrt(fan_in), ..)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _fans(weight.shape)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)

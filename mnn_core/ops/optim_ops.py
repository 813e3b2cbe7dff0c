"""Fused optimizer updates: one op per parameter per step.

Each takes the parameter, its gradient and its optimizer state, and returns
the new parameter and new state (PyTorch's update rules exactly). The
learning rate and the step count are 0-d float32 *inputs*, not attributes, so
a learning-rate schedule changes them without re-tracing a compiled step.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ._util import rand, same_dtype
from .schema import Attr, OpSchema, Sample, register


def _update_infer(op: str, n_tensors: int, n_outputs: int):
    """The first n_tensors inputs share the parameter's shape; the rest are scalars."""

    def infer(ins, attrs):
        p = ins[0]
        for i, info in enumerate(ins):
            if info is None:
                continue
            want = p.shape if i < n_tensors else ()
            if info.shape != want:
                raise GraphError(f"{op}: input {i} must have shape {want}, got {info.shape}")
        same_dtype(ins, op)
        return [p] * n_outputs

    return infer


def _scalar(a: np.ndarray) -> float:
    return float(np.asarray(a).reshape(()))


def _sgd(ins, attrs):
    p, g, lr = ins
    d = g.astype(np.float64) + attrs["weight_decay"] * p
    return [(p - _scalar(lr) * d).astype(p.dtype)]


def _sgd_momentum(ins, attrs):
    p, g, buf, lr = ins[:4]
    step = _scalar(ins[4]) if len(ins) > 4 and ins[4] is not None else 0.0
    mu, damp = attrs["momentum"], attrs["dampening"]
    d = g.astype(np.float64) + attrs["weight_decay"] * p
    new_buf = d if step == 1.0 else mu * buf + (1.0 - damp) * d  # PyTorch starts the buffer at d
    d = d + mu * new_buf if attrs["nesterov"] else new_buf
    return [(p - _scalar(lr) * d).astype(p.dtype), new_buf.astype(p.dtype)]


def _adam(ins, attrs):
    p, g, m, v, lr, step = ins
    lr, t = _scalar(lr), _scalar(step)
    b1, b2, wd = attrs["beta1"], attrs["beta2"], attrs["weight_decay"]
    p64, g64 = p.astype(np.float64), g.astype(np.float64)
    if attrs["decoupled"]:  # AdamW
        p64 = p64 * (1.0 - lr * wd)
    elif wd:
        g64 = g64 + wd * p64
    m2 = b1 * m + (1.0 - b1) * g64
    v2 = b2 * v + (1.0 - b2) * g64 * g64
    denom = np.sqrt(v2) / np.sqrt(1.0 - b2**t) + attrs["eps"]
    p64 = p64 - (lr / (1.0 - b1**t)) * m2 / denom
    dt = p.dtype
    return [p64.astype(dt), m2.astype(dt), v2.astype(dt)]


def _f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _samples(kind: str):
    def samples(rng):
        for shape in [(7,), (3, 4, 2, 2), (16, 5)]:
            p, g = rand(rng, *shape), rand(rng, *shape)
            if kind == "sgd":
                yield Sample([p, g, _f32(0.1)], {"weight_decay": 1e-4}, label=str(shape))
            elif kind == "momentum":
                buf = rand(rng, *shape)
                yield Sample([p, g, buf, _f32(0.05)], {"momentum": 0.9, "weight_decay": 5e-4}, label=str(shape))
                yield Sample([p, g, buf, _f32(0.05)], {"momentum": 0.9, "nesterov": 1}, label=f"{shape} nesterov")
                yield Sample(
                    [p, g, buf, _f32(0.05), _f32(1)], {"momentum": 0.8, "dampening": 0.1}, label=f"{shape} first step"
                )
            else:
                m, v = rand(rng, *shape), rand(rng, *shape, low=0.0, high=1.0)
                yield Sample([p, g, m, v, _f32(1e-3), _f32(3)], {}, label=f"{shape} adam")
                yield Sample(
                    [p, g, m, v, _f32(1e-3), _f32(1)], {"weight_decay": 0.01, "decoupled": 1}, label=f"{shape} adamw"
                )

    return samples


register(
    OpSchema(
        "SGDUpdate",
        infer=_update_infer("SGDUpdate", 2, 1),
        reference=_sgd,
        attrs={"weight_decay": Attr("float", 0.0)},
        n_inputs=(3, 3),
        samples=_samples("sgd"),
        inplace=True,
        doc="(param, grad, lr) -> param - lr * (grad + weight_decay * param).",
    )
)

register(
    OpSchema(
        "SGDMomentumUpdate",
        infer=_update_infer("SGDMomentumUpdate", 3, 2),
        reference=_sgd_momentum,
        attrs={
            "momentum": Attr("float", 0.9),
            "dampening": Attr("float", 0.0),
            "nesterov": Attr("int", 0, (0, 1)),
            "weight_decay": Attr("float", 0.0),
        },
        n_inputs=(4, 5),
        n_outputs=2,
        samples=_samples("momentum"),
        inplace=True,
        doc="(param, grad, buf, lr[, step]) -> (param, buf), PyTorch's SGD with momentum; "
        "step == 1 starts the buffer at the gradient (only matters with dampening).",
    )
)

register(
    OpSchema(
        "AdamUpdate",
        infer=_update_infer("AdamUpdate", 4, 3),
        reference=_adam,
        attrs={
            "beta1": Attr("float", 0.9),
            "beta2": Attr("float", 0.999),
            "eps": Attr("float", 1e-8),
            "weight_decay": Attr("float", 0.0),
            "decoupled": Attr("int", 0, (0, 1), doc="1: AdamW"),
        },
        n_inputs=(6, 6),
        n_outputs=3,
        samples=_samples("adam"),
        inplace=True,
        doc="(param, grad, m, v, lr, step) -> (param, m, v) with bias correction; decoupled=1 is AdamW.",
    )
)

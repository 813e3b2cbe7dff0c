"""torch.nn.utils: gradient clipping and parameters as one vector."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..errors import MnnError
from ..express import Var


def _grads(parameters) -> list[Var]:
    params = [parameters] if isinstance(parameters, Var) else list(parameters)
    return [p for p in params if p.grad is not None]


def clip_grad_norm_(
    parameters: Iterable | Var, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
) -> Var:
    """Scale every gradient by max_norm / total_norm when the norm of all of them together exceeds max_norm.

    Returns the total norm (before clipping), as PyTorch does."""
    params = _grads(parameters)
    norm_type = float(norm_type)
    if not params:
        return Var(np.zeros((), np.float32))
    grads = [p.grad.numpy() for p in params]
    if math.isinf(norm_type):
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = sum(float((np.abs(g.astype(np.float64)) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise MnnError(
            f"clip_grad_norm_: the total norm of the gradients is {total}; pass error_if_nonfinite=False to clip anyway"
        )
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for p in params:
            p.grad = Var(p.grad.numpy() * np.asarray(coef, p.grad.dtype))
    return Var(np.asarray(total, grads[0].dtype))


def clip_grad_value_(parameters: Iterable | Var, clip_value: float, foreach=None) -> None:
    """Clip every gradient element to [-clip_value, clip_value]."""
    for p in _grads(parameters):
        p.grad = Var(np.clip(p.grad.numpy(), -clip_value, clip_value))


def parameters_to_vector(parameters: Iterable) -> Var:
    return Var(np.concatenate([np.asarray(p.numpy()).reshape(-1) for p in parameters]))


def vector_to_parameters(vec, parameters: Iterable) -> None:
    flat = np.asarray(vec.numpy() if isinstance(vec, Var) else vec)
    offset = 0
    for p in parameters:
        n = p.numel()
        np.copyto(p.data, flat[offset : offset + n].reshape(p.shape))
        offset += n
    if offset != flat.size:
        raise MnnError(f"vector_to_parameters: the vector has {flat.size} values, the parameters {offset}")

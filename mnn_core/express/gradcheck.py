"""Check gradient rules against central finite differences (use float64 inputs)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

import numpy as np

from .var import Var


def _projected(fn: Callable, arrays: Sequence[np.ndarray], weights: np.ndarray | None):
    """fn's output dotted with fixed random weights: one scalar that sees every output element."""
    out = fn(*[Var(a) for a in arrays])
    data = out.numpy()
    if weights is None:
        weights = np.random.default_rng(7).standard_normal(data.shape)
    return float((data.astype(np.float64) * weights).sum()), weights


def numeric_grad(fn: Callable, arrays: Sequence[np.ndarray], index: int, weights, eps: float = 1e-6) -> np.ndarray:
    x = arrays[index]
    g = np.zeros(x.shape, np.float64)
    flat = x.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi, _ = _projected(fn, arrays, weights)
        flat[i] = old - eps
        lo, _ = _projected(fn, arrays, weights)
        flat[i] = old
        g.reshape(-1)[i] = (hi - lo) / (2 * eps)
    return g


def gradcheck(
    fn: Callable,
    *arrays: np.ndarray,
    wrt: Sequence[int] | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-4,
    atol: float = 1e-6,
) -> bool:
    """Compare the autograd gradient of fn(*Vars) with finite differences; raise AssertionError on a mismatch."""
    arrays = [np.array(a) for a in arrays]
    wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"] if wrt is None else list(wrt)
    _, weights = _projected(fn, arrays, None)
    vs = [Var(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
    out = fn(*vs)
    (out * Var(weights.astype(out.dtype))).sum().backward()
    for i in wrt:
        got = np.zeros(arrays[i].shape) if vs[i].grad is None else vs[i].grad.numpy()
        want = numeric_grad(fn, arrays, i, weights, eps)
        if not np.allclose(got, want, rtol=rtol, atol=atol):
            worst = np.abs(got - want).max()
            raise AssertionError(
                f"gradient of input {i} differs from finite differences by up to {worst:.3g}\n"
                f"autograd:\n{got}\nnumeric:\n{want}"
            )
    return True

"""express: tensors with operator overloading, autograd, eager and lazy modes.

from mnn_core import express as E
from mnn_core.express import functional as F

x = E.Var(np.random.rand(4, 3), requires_grad=True)
loss = F.relu(x @ w).sum()
loss.backward()                 # x.grad

with E.lazy("model") as t:      # the same code, recorded as a static Graph
    t.output(F.relu(t.input("x", ("N", 3)) @ w), "y")
graph = t.build()
"""

from __future__ import annotations

from . import functional, grad_rules, torch_more  # noqa: F401  grad_rules, torch_more attach gradient rules to op schemas
from .autograd import GradContext, backward, grad
from .gradcheck import gradcheck, numeric_grad
from .lazy import Trace, assign, lazy
from .rng import generator, manual_seed
from .var import Var, apply, as_var, enable_grad, is_grad_enabled, no_grad


def tensor(data, dtype=None, requires_grad: bool = False) -> Var:
    """A new Var holding a copy of `data` (Python floats become float32, ints int64)."""
    import numpy as np

    return Var(
        np.array(data, dtype=dtype) if isinstance(data, np.ndarray) else data, dtype=dtype, requires_grad=requires_grad
    )


def zeros(*shape, dtype="float32", requires_grad: bool = False) -> Var:
    import numpy as np

    return Var(np.zeros(_shape(shape), dtype), requires_grad=requires_grad)


def ones(*shape, dtype="float32", requires_grad: bool = False) -> Var:
    import numpy as np

    return Var(np.ones(_shape(shape), dtype), requires_grad=requires_grad)


def randn(*shape, dtype="float32", requires_grad: bool = False) -> Var:
    return Var(generator().standard_normal(_shape(shape)).astype(dtype), requires_grad=requires_grad)


def _shape(shape) -> tuple:
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)


__all__ = [
    "GradContext",
    "Trace",
    "Var",
    "apply",
    "as_var",
    "assign",
    "backward",
    "enable_grad",
    "functional",
    "generator",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "lazy",
    "manual_seed",
    "no_grad",
    "numeric_grad",
    "ones",
    "randn",
    "tensor",
    "zeros",
]

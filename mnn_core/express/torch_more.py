"""More of PyTorch's tensor API: selection (gather, index_select, topk, sort, flip), scans and
predicates (cumsum, all, any, isnan), rounding, integer `%` and `//`, and sampling (multinomial).

Each maps onto an op, so it runs on the backend and differentiates where PyTorch does: gather and
topk's values through GatherElements (its gradient, a ScatterElements add, is attached here),
index_select through Gather, flip through a negative-step Slice, cumsum through CumSum. Index
results (argsort, nonzero, multinomial) carry no gradient, as in PyTorch; prod has none yet.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ..errors import MnnError
from ..ops import get_schema
from .var import Var, apply, as_var

#: what topk and sort return, as torch.return_types.topk / sort
ValuesIndices = namedtuple("ValuesIndices", ["values", "indices"])


def _gather_elements_grad(ctx):
    data, idx = ctx.inputs
    zeros = as_var(np.zeros(data.shape, data.dtype), data)
    return [apply("ScatterElements", zeros, idx, ctx.grad, axis=ctx.attrs["axis"], reduction="add"), None]


get_schema("GatherElements").gradient = _gather_elements_grad


def _index(v) -> Var:
    v = as_var(v)
    if v.dtype.kind not in "iu":
        raise MnnError(f"an index tensor must hold integers, got {v.dtype}")
    return v if v.dtype == np.int64 else apply("Cast", v, to="int64")


def gather(x, dim: int, index):
    """out[i][j] = x[index[i][j]][j] (dim 0), and so on: torch.gather."""
    index = _index(index)
    dim = int(dim) % x.ndim
    if index.ndim != x.ndim:
        raise MnnError(f"gather: index has rank {index.ndim}, the input {x.ndim}; they must be equal")
    # PyTorch lets the index be smaller than the input off `dim`; GatherElements wants them equal
    cut = tuple(slice(None) if d == dim else slice(0, index.shape[d]) for d in range(x.ndim))
    if builtins.any(index.shape[d] < x.shape[d] for d in range(x.ndim) if d != dim):
        x = x[cut]
    return apply("GatherElements", x, index, axis=dim)


def index_select(x, dim: int, index):
    return apply("Gather", x, _index(index), axis=int(dim))


def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """(values, indices) of the k largest (or smallest) along dim; values carry the gradient."""
    from .var import no_grad

    with no_grad():
        _, idx = apply(
            "TopK", x.detach(), n_outputs=2, k=int(k), axis=int(dim), largest=int(largest), sorted=int(sorted)
        )
    return ValuesIndices(gather(x, dim, idx), idx)


def sort(x, dim: int = -1, descending: bool = False, stable: bool = False):
    return topk(x, x.shape[dim], dim, largest=descending, sorted=True)


def argsort(x, dim: int = -1, descending: bool = False, stable: bool = False):
    return sort(x, dim, descending).indices


def flip(x, dims):
    dims = [int(d) % x.ndim for d in ((dims,) if isinstance(dims, int) else dims)]
    return apply("Slice", x, starts=[-1] * len(dims), ends=[-(2**62)] * len(dims), axes=dims, steps=[-1] * len(dims))


def cumsum(x, dim: int, dtype=None):
    x = x if dtype is None else x.astype(dtype)
    return apply("CumSum", x, axis=int(dim), exclusive=0, reverse=0)


def _reduce_bool(x, op: str, dim, keepdim: bool):
    x = as_var(x)
    flags = x if x.dtype == np.bool_ else apply("Not", apply("Equal", x, 0))
    as_int = apply("Cast", flags, to="int64")
    axes = list(range(x.ndim)) if dim is None else [int(dim)]
    out = apply(op, as_int, axes=axes, keepdims=int(keepdim))
    return apply("Cast", out, to="bool")


def all(x, dim=None, keepdim: bool = False):  # noqa: A001
    return _reduce_bool(x, "ReduceMin", dim, keepdim)


def any(x, dim=None, keepdim: bool = False):  # noqa: A001
    return _reduce_bool(x, "ReduceMax", dim, keepdim)


def isnan(x):
    return apply("IsNaN", x)


def isinf(x):
    return apply("IsInf", x)


def isfinite(x):
    return apply("Not", apply("Or", isnan(x), isinf(x)))


def floor(x):
    return apply("Floor", x)


def ceil(x):
    return apply("Ceil", x)


def round(x):
    return apply("Round", x)  # noqa: A001  (half to even, as PyTorch)


def sign(x):
    return apply("Sign", x)


def rsqrt(x):
    return apply("Reciprocal", apply("Sqrt", x))


def square(x):
    return x * x


def reciprocal(x):
    return apply("Reciprocal", x)


def prod(x, dim=None, keepdim: bool = False):
    axes = list(range(x.ndim)) if dim is None else [int(dim)]
    return apply("ReduceProd", x, axes=axes, keepdims=int(keepdim))


def outer(a, b):
    return apply("Unsqueeze", a, axes=[1]) * apply("Unsqueeze", b, axes=[0])


def unbind(x, dim: int = 0):
    return tuple(x[(slice(None),) * (dim % x.ndim) + (i,)] for i in range(x.shape[dim]))


def remainder(a, b):
    """a % b with the sign of b (Python's and PyTorch's %)."""
    a = as_var(a, b if isinstance(b, Var) else None)
    return apply("Mod", a, as_var(b, a), fmod=0)


def floor_divide(a, b):
    a = as_var(a, b if isinstance(b, Var) else None)
    b = as_var(b, a)
    if a.dtype.kind == "f":
        return floor(a / b)
    return apply("Div", a - remainder(a, b), b)  # exact: a - a % b is a multiple of b


def nonzero(x, as_tuple: bool = False):
    """Indices of non-zero elements, (count, rank) int64 (a value-dependent shape: computed on the host)."""
    idx = np.nonzero(np.asarray(x))
    return tuple(Var(i.astype(np.int64)) for i in idx) if as_tuple else Var(np.stack(idx, 1).astype(np.int64))


def multinomial(probs, num_samples: int, replacement: bool = False, generator=None):
    """Draw category indices per row of (unnormalized) probabilities, from mnn's generator."""
    from .rng import generator as rng

    p = np.asarray(probs, np.float64)
    rows = p.reshape(-1, p.shape[-1])
    if (rows < 0).any() or not np.isfinite(rows).all() or (rows.sum(1) <= 0).any():
        raise MnnError("multinomial: probabilities must be finite, non-negative, with a positive sum per row")
    if not replacement and num_samples > rows.shape[1]:
        raise MnnError(f"multinomial: {num_samples} samples without replacement from {rows.shape[1]} categories")
    g = generator or rng()
    out = np.stack([g.choice(rows.shape[1], num_samples, replace=replacement, p=r / r.sum()) for r in rows])
    return Var(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


__all__ = [
    "all",
    "any",
    "argsort",
    "ceil",
    "cumsum",
    "flip",
    "floor",
    "floor_divide",
    "gather",
    "index_select",
    "isfinite",
    "isinf",
    "isnan",
    "multinomial",
    "nonzero",
    "outer",
    "prod",
    "reciprocal",
    "remainder",
    "round",
    "rsqrt",
    "sign",
    "sort",
    "square",
    "topk",
    "unbind",
]

"""Small helpers shared by the op family modules."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ..graph.symbolic import unify


def broadcast_shape(*shapes: tuple) -> tuple:
    """numpy broadcasting of shapes; raise GraphError when incompatible. A symbolic dimension
    broadcasts as a size other than 1 (graph.symbolic.unify)."""
    if all(isinstance(d, (int, np.integer)) for s in shapes for d in s):
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise GraphError(f"shapes {' and '.join(map(str, shapes))} do not broadcast") from None
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        d = 1
        for x in dims:
            if x == 1:
                continue
            merged = x if d == 1 else unify(d, x)
            if merged is None:
                raise GraphError(f"shapes {' and '.join(map(str, shapes))} do not broadcast")
            d = merged
        out.append(d)
    return tuple(out)


def same_dtype(infos: list, op: str) -> str:
    dtypes = {i.dtype for i in infos if i is not None}
    if len(dtypes) != 1:
        raise GraphError(f"{op} needs inputs of one dtype, got {sorted(dtypes)}")
    return dtypes.pop()


def normalize_axis(axis: int, rank: int, op: str) -> int:
    if not -rank <= axis < max(rank, 1):
        raise GraphError(f"{op}: axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1)


def rand(rng: np.random.Generator, *shape: int, dtype: str = "float32", low=-1.0, high=1.0) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(dtype)


def info_like(x: TensorInfo, shape=None, dtype=None) -> TensorInfo:
    return TensorInfo(x.shape if shape is None else tuple(shape), dtype or x.dtype)

"""A run's inputs: the checks that say what does not fit (check_feeds), what a checked run keeps so
that the next run with arrays alike skips the checks (FastFeeds), and whether the steps may read the
caller's array where it is instead of a copy in the arena (readable_in_place).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend import HOST
from ..errors import InputError
from ..graph.ir import TensorInfo
from .plan import PreparedPlan


def check_feeds(feeds: Any, inputs: dict[str, TensorInfo]) -> dict[str, np.ndarray]:
    """The run's arrays by input name, in the model's input order; an InputError naming what does not
    fit (not a dict, a missing or unknown input, another kind of dtype, another shape)."""
    input_names = list(inputs)
    if not isinstance(feeds, dict):
        raise InputError(f"run() takes a dict {{input name: array}}; inputs are {input_names}")
    odd = [k for k in feeds if not isinstance(k, str)]
    if odd:
        raise InputError(
            f"run() takes a dict {{input name: array}} keyed by the inputs' names "
            f"({', '.join(input_names)}), got key {odd[0]!r} ({type(odd[0]).__name__})"
        )
    missing = [n for n in input_names if n not in feeds]
    extra = [n for n in feeds if n not in inputs]
    if missing or extra:
        raise InputError(
            f"inputs {'missing: ' + ', '.join(missing) if missing else ''}"
            f"{'; ' if missing and extra else ''}{'unknown: ' + ', '.join(extra) if extra else ''}"
            f" (the model takes {', '.join(f'{n} {i}' for n, i in inputs.items())})"
        )
    out = {}
    for name in input_names:
        arr = np.asarray(feeds[name])
        want = inputs[name]
        if arr.dtype != np.dtype(want.dtype) and dtype_kind(arr.dtype) != dtype_kind(np.dtype(want.dtype)):
            raise InputError(
                f"input {name!r} must be {want.dtype} (another {dtype_kind(np.dtype(want.dtype))} "
                f"dtype is converted), got {arr.dtype}"
            )
        if arr.ndim != len(want.shape) or any(isinstance(d, int) and d != s for d, s in zip(want.shape, arr.shape)):
            raise InputError(f"input {name!r} must have shape {want}, got {tuple(arr.shape)}")
        out[name] = arr
    return out


class FastFeeds:
    """What a run's checks decided, kept for the next run: the input arrays' types, dtypes and
    shapes, and where each goes (bind_inputs). A run whose arrays match skips check_feeds, the
    batch split's look-up and the plan's; anything else takes the checked path."""

    __slots__ = ("plan", "names", "kinds", "views", "move_at", "lo", "hi", "n_movable")

    @classmethod
    def make(cls, given: Any, names: list[str], plan: PreparedPlan) -> FastFeeds | None:
        if type(given) is not dict or len(given) != len(names):
            return None
        kinds = []
        for name in names:
            arr = given[name]
            if type(arr) is not np.ndarray:  # lists and subclasses go through np.asarray each time
                return None
            kinds.append((arr.dtype, arr.shape))
        self = cls()
        self.plan, self.names, self.kinds = plan, tuple(names), tuple(kinds)
        self.views = tuple(plan.input_views[n] for n in names)
        self.move_at = tuple(
            plan.move_index.get(n, -1) if d == v.dtype else -1 for n, (d, _), v in zip(names, kinds, self.views)
        )
        host = plan.arenas.get(HOST)
        self.lo, self.hi = (0, 0) if host is None else (host.ctypes.data, host.ctypes.data + host.nbytes)
        self.n_movable = len(plan.program.movable)
        return self

    def match(self, feeds: Any) -> tuple | None:
        """The arrays in input order where `feeds` has exactly the inputs, each an ndarray of the
        dtype and shape of last time; else None."""
        if type(feeds) is not dict or len(feeds) != len(self.names):
            return None
        arrays = []
        for name, (dtype, shape) in zip(self.names, self.kinds):
            arr = feeds.get(name)
            if type(arr) is not np.ndarray or arr.shape != shape or arr.dtype != dtype:
                return None
            arrays.append(arr)
        return tuple(arrays)


def readable_in_place(arr: np.ndarray, dtype: np.dtype, host: np.ndarray | None) -> bool:
    """Whether a movable input's steps may read the caller's array itself: its exact dtype, C order,
    aligned to its element size, and outside the arena (a view of the last run's outputs is copied
    first, as the steps will overwrite those bytes)."""
    return (
        arr.dtype == dtype
        and arr.flags.c_contiguous
        and arr.flags.aligned
        and (host is None or not np.may_share_memory(arr, host))
    )


def dtype_kind(dtype: np.dtype) -> str:
    """Inputs of the same kind are converted to the model's dtype; others are errors."""
    if dtype.kind == "f":
        return "floating-point"
    if dtype.kind in "iu":
        return "integer"
    return dtype.name

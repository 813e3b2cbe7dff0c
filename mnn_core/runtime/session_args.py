"""The Session's arguments checked and resolved: the precisions and batch_parallel modes it takes
(check_arguments), its backends' options (check_options), its limits from the argument or the
environment (session_limit, LIMIT_ENV), and the inputs' symbolic dimensions fixed by
Session(input_shapes=) (fix_input_shapes).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..errors import InputError, MnnError
from ..graph.ir import Graph, TensorInfo

PRECISIONS = ("high", "normal", "low")
#: Session(batch_parallel=): "auto" (the default) runs a batch as images where that is safe (host
#: backends only, a batch-separable model) and pays (batch_split.split_pays: an image's activations
#: outweigh the weights); "on" whenever the model is batch-separable (at one thread: the images in
#: turn); "off" never
BATCH_PARALLEL = ("auto", "on", "off")
#: plans a session keeps by default, one per set of input shapes (and values of inputs that decide
#: shapes): the least recently used goes when one more is made (Session(max_plans=), MNN_MAX_PLANS)
MAX_PLANS = 32
#: the environment's defaults for Session(max_plans=, max_arena_bytes=, max_loop_iterations=)
LIMIT_ENV = {
    "max_plans": "MNN_MAX_PLANS",
    "max_arena_bytes": "MNN_MAX_ARENA_BYTES",
    "max_loop_iterations": "MNN_MAX_LOOP_ITERATIONS",
}


def check_arguments(precision: str, threads: int, batch_parallel: str) -> None:
    """A MnnError naming the Session argument that is not one of those it takes."""
    if precision not in PRECISIONS:
        raise MnnError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if not isinstance(threads, int) or threads < 1:
        raise MnnError(f"threads must be a positive int, got {threads!r}")
    if batch_parallel not in BATCH_PARALLEL:
        raise MnnError(f"batch_parallel must be one of {', '.join(BATCH_PARALLEL)}, got {batch_parallel!r}")


def check_options(options: dict, backends: dict) -> None:
    """A MnnError for a "<backend>.<key>" option that its installed backend does not declare
    (Backend.options), naming those it takes; a warning for one whose prefix names no installed
    backend, which nothing would read (a backend installed elsewhere may, so it is not an error)."""
    for key in options:
        prefix, dot, _ = str(key).partition(".")
        backend = backends.get(prefix) if dot else None
        if backend is None:
            warnings.warn(
                f"Session option {key!r} names no installed backend, so nothing reads it (options are "
                f"'<backend>.<name>'; installed: {', '.join(sorted(backends))})",
                stacklevel=3,
            )
            continue
        declared = getattr(backend, "options", None)
        if declared is not None and key not in declared:
            unknown = sorted(k for k in options if str(k).startswith(dot.join((prefix, ""))) and k not in declared)
            takes = f"the options are {', '.join(declared)}" if declared else "it takes none"
            raise MnnError(f"{prefix}: unknown option(s) {', '.join(unknown)}; {takes}")


def session_limit(name: str, given: int | None, default: int | None = None) -> int | None:
    """A Session limit: the argument, else its environment variable (LIMIT_ENV), else `default`."""
    source = f"Session({name}=)"
    if given is None:
        text = os.environ.get(LIMIT_ENV[name], "").strip()
        if not text:
            return default
        source = f"environment variable {LIMIT_ENV[name]}"
        try:
            given = int(text.replace("_", ""))
        except ValueError:
            raise MnnError(f"{source} must be a positive integer, got {text!r}") from None
    if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < 1:
        raise MnnError(f"{source} must be a positive integer, got {given!r}")
    return int(given)


def fix_input_shapes(graph: Graph, shapes: dict) -> Graph:
    """The graph with these inputs' symbolic dimensions fixed (Session(input_shapes=...))."""
    unknown = sorted(set(shapes) - set(graph.inputs))
    if unknown:
        raise InputError(
            f"input_shapes names {', '.join(unknown)}, which are not inputs (the model takes {', '.join(graph.inputs)})"
        )
    graph = graph.copy()
    for name, shape in shapes.items():
        declared = graph.inputs[name]
        shape = tuple(int(d) for d in shape)
        if len(shape) != len(declared.shape) or any(
            isinstance(d, int) and d != s for d, s in zip(declared.shape, shape)
        ):
            raise InputError(f"input_shapes: input {name!r} is {declared}; {shape} does not fit it")
        graph.inputs[name] = TensorInfo(shape, declared.dtype)
    return graph

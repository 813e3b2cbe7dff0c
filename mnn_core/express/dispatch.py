"""Eager ops on the best installed backend's kernels.

An eager op (`express.apply` outside a trace) runs here: the first call of an
(op, attributes, input shapes and dtypes) prepares that op once on the best
available host backend that has a kernel for it (mnn-x86 where installed; the
backends in order of their priority), exactly as a Session would prepare one
node; later calls find the prepared execution in a cache and only point it at
their arrays (`_eager.Call`: the kernel runs in C without the GIL). An op no
such backend takes, or one whose execution cannot run on the caller's arrays,
runs the op schema's numpy reference kernel, as it always did.

    from mnn_core.express import dispatch
    dispatch.set_num_threads(2)          # the threads each eager kernel may use (default 1)
    dispatch.set_backend("reference")    # numpy only; "auto" (default) or a backend name
    with dispatch.using("reference"): ...

"auto" follows the default device (`express.set_default_device`): "cpu" takes
the host backends in order of priority; a host backend's name ("x86",
"reference") takes that one alone. The data of an eager tensor is numpy in
host memory, so a GPU device ("vulkan") runs its eager ops on the host
backends too; its compiled modules and steps are what run on the GPU.

View ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity) stay on the reference:
numpy gives a view for free. The caches are per thread, since a prepared
execution must never run on two threads at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..backend.api import HOST, CExecution, PrepareContext
from ..errors import MnnError
from ..graph.ir import Node, TensorInfo
from .device import _DEFAULT as _DEFAULT_DEVICE

try:  # the compiled kernel call; without it every eager op runs the reference (a source tree not built)
    from ._eager import Call, movable
except ImportError:  # pragma: no cover - a checkout whose extensions were not built
    Call = movable = None

#: ops whose reference result is a numpy view of the input: free, where a kernel would copy
VIEW_OPS = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"})
#: prepared executions kept per thread; past this the cache starts over (attributes that never repeat)
MAX_CACHED = 4096
_MISS = object()


class _Settings:
    backend: str = os.environ.get("MNN_EAGER_BACKEND", "auto")
    threads: int = 1
    generation: int = 0  # bumped by every change: each thread's cache then starts over


_SETTINGS = _Settings()
_LOCAL = threading.local()
_BACKENDS_LOCK = threading.Lock()
_BACKENDS: dict = {}  # generation -> [(backend, its kernel table)], best first


def set_num_threads(n: int) -> None:
    """The threads each eager kernel may use (as torch.set_num_threads); 1 by default."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise MnnError(f"set_num_threads takes a positive int, got {n!r}")
    _SETTINGS.threads = int(n)
    _SETTINGS.generation += 1


def get_num_threads() -> int:
    return _SETTINGS.threads


def set_backend(name: str) -> None:
    """Where eager ops run: "auto" (the best available host backend per op, then the reference),
    "reference" (numpy only), or one backend's name (that backend where it has the kernel, else the reference)."""
    if not isinstance(name, str):
        raise MnnError(f"set_backend takes a backend name, got {name!r}")
    if name not in ("auto", "reference"):
        from ..backend.plugins import get_plugins

        backends = get_plugins().backends
        if name not in backends:
            raise MnnError(f"no backend {name!r} is installed; installed: {', '.join(sorted(backends))}")
        _check_host(backends[name])
    _SETTINGS.backend = name
    _SETTINGS.generation += 1


def get_backend() -> str:
    return _SETTINGS.backend


@contextmanager
def using(backend: str | None = None, threads: int | None = None) -> Iterator[None]:
    """Eager ops inside the block run on `backend` with `threads` (each left as it is when None)."""
    prev = (_SETTINGS.backend, _SETTINGS.threads)
    try:
        if backend is not None:
            set_backend(backend)
        if threads is not None:
            set_num_threads(threads)
        yield
    finally:
        _SETTINGS.backend, _SETTINGS.threads = prev
        _SETTINGS.generation += 1


def _check_host(backend) -> None:
    avail = backend.availability()
    if not avail:
        raise MnnError(f"backend {backend.name!r} is not available here: {avail.reason}")
    if backend.memory_domain_for(_context()) != HOST:
        raise MnnError(
            f"backend {backend.name!r} keeps tensors in {backend.memory_domain!r} memory; eager ops run "
            "on host (CPU) backends only; compile the model (mnn_core.Session) to run it there"
        )


def _context() -> PrepareContext:
    return PrepareContext(threads=_SETTINGS.threads)


# -- the per-op path ------------------------------------------------------------------------------------


def run(op: str, schema, arrays: list, attrs: dict, n_outputs: int) -> list:
    """The outputs of one eager op (numpy arrays): a prepared kernel's, or the reference's."""
    local = _LOCAL
    if getattr(local, "generation", -1) != _SETTINGS.generation or local.device is not _DEFAULT_DEVICE[0]:
        local.cache, local.generation, local.device = {}, _SETTINGS.generation, _DEFAULT_DEVICE[0]
    try:
        key = (
            op,
            n_outputs,
            tuple([tuple(v) if type(v) is list else v for v in attrs.values()]),
            tuple([None if a is None else (a.shape, a.dtype) for a in arrays]),
        )
        call = local.cache.get(key, _MISS)
    except TypeError:  # an attribute that cannot be a key (a tensor attribute): nothing to reuse
        key, call = None, None
    if call is _MISS:
        if len(local.cache) >= MAX_CACHED:
            local.cache.clear()
        call = local.cache[key] = _prepare(op, schema, arrays, attrs, n_outputs)
    if call is None:
        return schema.reference(arrays, attrs)
    return call([a for a in arrays if a is not None])


def _prepare(op: str, schema, arrays: list, attrs: dict, n_outputs: int):
    """A Call of the best backend's execution of this op at these shapes, or None for the reference."""
    if Call is None or op in VIEW_OPS or _SETTINGS.backend == "reference":
        return None
    if any(a is not None and (type(a) is not np.ndarray or a.size == 0) for a in arrays):
        return None  # scalars and empty tensors: nothing a kernel would do faster
    try:
        ins = [None if a is None else TensorInfo(a.shape, a.dtype.name) for a in arrays]
        outs = list(schema.infer(ins, attrs))[:n_outputs]
    except Exception:  # a dtype the graph IR has no name for, a shape inference refuses: the reference decides
        return None
    if len(outs) != n_outputs or any(not o.is_static or o.size == 0 for o in outs):
        return None
    node = Node(
        op,
        [f"in{i}" if a is not None else "" for i, a in enumerate(arrays)],
        [f"out{i}" for i in range(n_outputs)],
        dict(attrs),
        name=f"eager_{op.lower()}",
    )
    for backend, kernels in _backends(_DEFAULT_DEVICE[0].type):
        spec = kernels.get(op)
        if spec is None:
            continue
        try:
            if spec.accepts(node, ins) is not True:
                continue
            execution = backend.prepare(node, ins, outs, {}, _context())
        except Exception:  # a backend that declines at prepare: the next one, or the reference
            continue
        if isinstance(execution, CExecution) and movable(execution):
            return Call(
                execution,
                [(i.shape, i.dtype) for i in ins if i is not None],
                [(o.shape, o.dtype) for o in outs],
                backend.name,
            )
    return None


def _backends(device: str) -> list:
    """(backend, kernel table) of the host backends eager ops may use now, best first."""
    key = (_SETTINGS.generation, device)
    with _BACKENDS_LOCK:
        found = _BACKENDS.get(key)
        if found is None:
            found = _BACKENDS[key] = _find_backends(device)
            for old in [k for k in _BACKENDS if k != key]:
                del _BACKENDS[old]
        return found


def _find_backends(device: str) -> list:
    from ..backend.plugins import get_plugins

    backends = get_plugins().backends
    wanted = _SETTINGS.backend
    if wanted == "auto" and device != "cpu" and device in backends:
        try:
            _check_host(backends[device])
            wanted = device  # the default device is a host backend: that one alone
        except MnnError:
            pass  # a GPU device: its eager ops still run on the host backends
    chosen = []
    for backend in backends.values():
        name = backend.name
        if name == "reference" or wanted not in ("auto", name):
            continue
        try:
            _check_host(backend)
            chosen.append((backend.priority, name, backend, dict(backend.kernels())))
        except Exception:  # unavailable, or not a host backend: eager ops never go there
            continue
    chosen.sort(key=lambda t: (-t[0], t[1]))
    return [(backend, kernels) for _, _, backend, kernels in chosen]


def placement() -> dict:
    """{op: backend name} of the ops this thread has prepared (what ran where), for tests and profiles."""
    fresh = getattr(_LOCAL, "generation", -1) == _SETTINGS.generation and _LOCAL.device is _DEFAULT_DEVICE[0]
    cache = _LOCAL.cache if fresh else {}
    out: dict = {}
    for key, call in cache.items():
        if key is not None:
            out.setdefault(key[0], set()).add("reference" if call is None else call.backend)
    return {op: sorted(names) for op, names in out.items()}

"""A child process uses a Session its parent ran (docs/RELIABILITY.md). With fork, the child inherits
the session: after mnn-x86 ran OpenMP regions on two threads, libgomp's team does not survive the
fork, and the child's next region waited forever; its OpenMP loops now run on one thread there (and
the claim-based pool starts new workers). A lock held by a parent thread at the fork is made anew.
With spawn, the child builds its own session. Every child must answer within TIMEOUT seconds."""

from __future__ import annotations

import multiprocessing as mp
import threading

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend.plugins import get_plugins

TIMEOUT = 60


def _model() -> mnn.Graph:
    """A convolution whose weight packing (256 x 144) and a softmax over 64 x 4096 values are large
    enough for mnn-x86 to run them as OpenMP regions at two threads."""
    rng = np.random.default_rng(0)
    b = mnn.GraphBuilder("fork")
    x = b.input("x", ("N", 16, 64, 64))
    w = b.const(rng.standard_normal((256, 16, 3, 3)).astype("float32") * 0.1)
    y = b.Conv(x, w, pads=[1, 1, 1, 1])
    b.output(b.Softmax(b.Add(y, b.Sigmoid(y)), axis=1), "y")
    return b.build()


def _input(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 16, 64, 64)).astype("float32")


def _x86_unavailable() -> str:
    backend = get_plugins().backends.get("x86")
    if backend is None:
        return "mnn-x86 is not installed"
    avail = backend.availability()
    return "" if avail else avail.reason


BACKENDS = [
    "reference",
    pytest.param("x86", marks=pytest.mark.skipif(bool(_x86_unavailable()), reason=_x86_unavailable() or "-")),
]
_SESSION: mnn.Session | None = None  # what a forked child inherits


def _child_uses_inherited(queue) -> None:
    out = [_SESSION.run({"x": _input(b)})["y"] for b in (3, 2)]  # batch 3: a new plan in the child
    queue.put(out)


def _child_builds_its_own(queue, backend: str) -> None:
    sess = mnn.Session(_model(), backend=backend, threads=2, batch_parallel="off")
    queue.put([sess.run({"x": _input(b)})["y"] for b in (3, 2)])


def _in_child(method: str, target, *args) -> list[np.ndarray]:
    ctx = mp.get_context(method)
    queue = ctx.Queue()
    child = ctx.Process(target=target, args=(queue, *args))
    child.start()
    try:
        got = queue.get(timeout=TIMEOUT)
    except Exception:  # queue.Empty: the child hung or died
        got = None
    child.join(TIMEOUT if got is not None else 1)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"the {method} child hung (killed after {TIMEOUT} s)")
    assert got is not None and child.exitcode == 0, f"the {method} child failed: exit code {child.exitcode}"
    return got


@pytest.mark.parametrize("backend", BACKENDS)
def test_forked_child_plans_and_runs_an_inherited_session(backend):
    global _SESSION
    graph = _model()
    _SESSION = mnn.Session(graph, backend=backend, threads=2, batch_parallel="off")
    _SESSION.run({"x": _input(2)})  # the parent ran it: OpenMP's team and mnn-x86's pool have threads
    want = [
        mnn.Session(graph, backend=backend, threads=2, batch_parallel="off").run({"x": _input(b)})["y"] for b in (3, 2)
    ]
    got = _in_child("fork", _child_uses_inherited)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_spawned_child_builds_and_runs_its_own(backend):
    want = [
        mnn.Session(_model(), backend=backend, threads=2, batch_parallel="off").run({"x": _input(b)})["y"]
        for b in (3, 2)
    ]
    got = _in_child("spawn", _child_builds_its_own, backend)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def test_fork_while_another_thread_holds_the_session():
    """A parent thread inside run() (holding the session's lock) at the moment of the fork: the child
    gets a session whose lock is free."""
    global _SESSION
    _SESSION = mnn.Session(_model(), backend="reference", batch_parallel="off")
    _SESSION.run({"x": _input(2)})
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with _SESSION._lock:
            held.set()
            release.wait(TIMEOUT)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(TIMEOUT)
    try:
        got = _in_child("fork", _child_uses_inherited)
    finally:
        release.set()
        t.join()
    np.testing.assert_allclose(got[1], _SESSION.run({"x": _input(2)})["y"], rtol=1e-5, atol=1e-7)

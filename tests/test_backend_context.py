"""allocate_arena / tensor_nbytes receive the session's PrepareContext (its precision)
when they take it, so a backend can size half-precision storage; plugins written
before that (one argument) keep working."""

from __future__ import annotations

import numpy as np
from test_session import DeviceArena, DeviceBackend

import mnn_core as mnn
from mnn_core.backend import takes_context


class HalfStorageBackend(DeviceBackend):
    """Sizes its tensors by the session's precision. (Its Python executions compute in
    fp32, so it cannot shrink them as fp16 storage would: it pads them under "low",
    which the plan must show just the same.)"""

    name = "halfdev"
    memory_domain = "halfdev"

    def __init__(self):
        self.seen = []

    def tensor_nbytes(self, info, ctx=None):
        self.seen.append(ctx.precision)
        return info.nbytes + 256 if ctx.precision == "low" else info.nbytes

    def allocate_arena(self, nbytes, ctx=None):
        self.seen.append(("arena", ctx.precision, nbytes))
        self.arena = DeviceArena(nbytes)
        return self.arena


def _graph():
    b = mnn.GraphBuilder()
    x = b.input("x", (4, 8))
    b.output(b.Mul(b.Relu(x), b.const(np.full((4, 8), 3.0, "float32"))), "y")
    return b.build()


def test_precision_reaches_the_planner(register_backend):
    dev = register_backend(HalfStorageBackend())
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    normal = mnn.Session(_graph(), backend="halfdev", fallback=False)
    arena_normal = [s for s in dev.seen if isinstance(s, tuple)][-1][2]
    dev.seen.clear()
    low = mnn.Session(_graph(), backend="halfdev", fallback=False, precision="low")
    assert set(s for s in dev.seen if not isinstance(s, tuple)) == {"low"}
    arena_low = [s for s in dev.seen if isinstance(s, tuple)][-1]
    assert arena_low[1] == "low" and arena_low[2] > arena_normal
    np.testing.assert_allclose(low.run({"x": x})["y"], np.maximum(x, 0) * 3, rtol=1e-6)
    np.testing.assert_allclose(normal.run({"x": x})["y"], np.maximum(x, 0) * 3, rtol=1e-6)


def test_one_argument_methods_still_work(register_backend):
    dev = register_backend(DeviceBackend())  # allocate_arena(nbytes) only
    assert not takes_context(dev.allocate_arena) and takes_context(HalfStorageBackend().allocate_arena)
    x = np.ones((4, 8), "float32")
    np.testing.assert_allclose(mnn.Session(_graph(), backend="dev", precision="low").run({"x": x})["y"], 3.0)


class SessionDomainBackend(DeviceBackend):
    """A host-memory backend that keeps its tensors in a domain of its own under precision="low"
    (as mnn-arm does with fp16 activations): Backend.memory_domain_for(ctx)."""

    name = "lowdom"
    memory_domain = "host"

    def memory_domain_for(self, ctx):
        return "lowdom" if ctx.precision == "low" else "host"


def test_memory_domain_may_depend_on_the_session(register_backend):
    register_backend(SessionDomainBackend())
    x = np.random.default_rng(1).standard_normal((4, 8)).astype("float32")
    normal = mnn.Session(_graph(), backend="lowdom", fallback=False)
    assert set(normal.memory) == {"host"} and not normal.plan.copies
    low = mnn.Session(_graph(), backend="lowdom", fallback=False, precision="low")
    assert set(low.memory) == {"host", "lowdom"}
    assert sorted(low.plan.copies) == ["x host->lowdom", "y lowdom->host"]
    for sess in (normal, low):
        np.testing.assert_allclose(sess.run({"x": x})["y"], np.maximum(x, 0) * 3, rtol=1e-6)

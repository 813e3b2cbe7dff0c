"""A Concat of tensors in a backend-private layout (Backend.concat_in_place): the core writes its
inputs in place only where their backend says that laid end to end they are the output in its
layout, and never across layouts.

The backend here keeps float32 tensors under a private code TAGGED whose bytes are dense, so its
parts end to end are their concatenation; its Concat kernel is real numpy, so results are right
whether the core elides the Concat or runs it."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend import Backend, DeviceInfo, KernelSpec, PyExecution

TAGGED = 7


class TaggedBackend(Backend):
    name = "tagged"

    def __init__(self, in_place: bool, tag=lambda value: True):
        self.in_place = in_place
        self.tag = tag  # which offered values take TAGGED
        self.asked: list = []

    def devices(self):
        return [DeviceInfo("numpy", peak_gflops=1e6, bandwidth_gbs=1e6, launch_us=0.01)]

    def kernels(self):
        return {"Neg": KernelSpec("Neg"), "Concat": KernelSpec("Concat")}

    def tensor_layouts(self, candidates, ctx):
        return {c.value: TAGGED for c in candidates if self.tag(c.value)}

    def concat_in_place(self, out, parts, axis):
        self.asked.append((tuple(out.shape), [tuple(p.shape) for p in parts], axis, out.layout))
        return self.in_place

    def prepare(self, node, ins, outs, constants, ctx):
        axis = node.attrs.get("axis")

        def run(i, o):
            values = [_array(v, info) for v, info in zip(i, ins)]
            result = np.negative(values[0]) if node.op == "Neg" else np.concatenate(values, axis=axis)
            np.copyto(_array(o[0], outs[0]), result)

        return PyExecution(run)


def _array(view: np.ndarray, info) -> np.ndarray:
    """A tensor as float32 of its shape: a TAGGED one arrives as its bytes."""
    return view.view(np.float32).reshape(info.shape) if info.layout == TAGGED else view


def _graph(batch: int = 1):
    """x -> Neg -> a; x -> Neg -> Neg -> b; Concat(a, b) along axis 1 -> Neg -> out"""
    g = mnn.GraphBuilder()
    x = g.input("x", (batch, 4, 8))  # 128 bytes an image: offsets the arena aligns
    a = g.Neg(x)
    b = g.Neg(g.Neg(x))
    g.output(g.Neg(g.Concat(a, b, axis=1)), "out")
    return g.build()


def _concat(sess) -> str:
    return next(p.node for p in sess.plan if p.op == "Concat")


def _expected(x):
    return -np.concatenate([-x, x], axis=1)


@pytest.mark.parametrize("in_place", [True, False])
def test_the_layout_owner_decides_whether_a_concat_is_written_in_place(register_backend, in_place):
    backend = register_backend(TaggedBackend(in_place))
    sess = mnn.Session(_graph(), backend="tagged", fallback=False)
    assert backend.asked == [((1, 8, 8), [(1, 4, 8), (1, 4, 8)], 1, TAGGED)]
    assert (_concat(sess) in sess.plan.elided) == in_place, str(sess.plan)
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 8)
    for _ in range(2):
        np.testing.assert_array_equal(sess.run({"x": x})["out"], _expected(x))


def test_a_concat_across_layouts_runs_without_asking(register_backend):
    """One input TAGGED, the other dense: no backend can vouch for both, so the Concat runs."""
    backend = register_backend(TaggedBackend(True, tag=lambda value: value == "neg"))
    sess = mnn.Session(_graph(), backend="tagged", fallback=False)
    assert sess.plan.layouts == {"neg": TAGGED}, str(sess.plan)
    assert backend.asked == [] and _concat(sess) not in sess.plan.elided
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(1, 4, 8)
    np.testing.assert_array_equal(sess.run({"x": x})["out"], _expected(x))


def test_batched_concat_is_never_asked(register_backend):
    """At batch 2 an input is not one run of the output: the core does not elide it in any layout."""
    backend = register_backend(TaggedBackend(True))
    sess = mnn.Session(_graph(batch=2), backend="tagged", fallback=False)
    assert backend.asked == [] and _concat(sess) not in sess.plan.elided
    x = np.arange(64, dtype=np.float32).reshape(2, 4, 8)
    np.testing.assert_array_equal(sess.run({"x": x})["out"], _expected(x))

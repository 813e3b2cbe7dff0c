"""Concatenations written in place: at batch 1 a channel Concat's inputs are contiguous runs of its
output, so the core places each input inside the output and the Concat takes no step. Every test
checks the values against numpy, and that the elision happened exactly where it is safe."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn

RNG = np.random.default_rng(0)


def _x(shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _session(build, shape, **kw):
    b = mnn.GraphBuilder()
    x = b.input("x", shape)
    build(b, x)
    return mnn.Session(b.build(), backend="reference", optimize=False, **kw)


def _fire(b, x):  # SqueezeNet's pattern: two branches, concatenated, then an in-place consumer
    b.output(b.Relu(b.Concat(b.Exp(x), b.Neg(x), axis=1)), "y")


def _fire_ref(x):
    return np.maximum(np.concatenate([np.exp(x), -x], 1), 0)


@pytest.mark.parametrize("shape", [(1, 16, 5, 5), (1, 32, 3, 7), (1, 16, 1, 1)])
def test_batch_1_channel_concat_takes_no_step(shape):
    sess = _session(_fire, shape)
    assert "concat" in sess.plan.elided
    for _ in range(2):  # a second run reuses the same memory
        x = _x(shape)
        np.testing.assert_allclose(sess.run({"x": x})["y"], _fire_ref(x), rtol=1e-6)


def test_concat_in_place_saves_memory():
    shape = (1, 64, 16, 16)
    b = mnn.GraphBuilder()
    x = b.input("x", shape)
    b.output(b.Concat(b.Exp(x), b.Neg(x), axis=1), "y")
    graph = b.build()
    sess = mnn.Session(graph, backend="reference", optimize=False)
    assert sess.plan.elided == ["concat"]
    # x, and the output holding both branches: no separate branch buffers
    assert sess.memory["host"].arena_bytes == 3 * int(np.prod(shape)) * 4


@pytest.mark.parametrize(
    "shape, why",
    [
        ((2, 16, 5, 5), "batch 2: each input is two runs of the output"),
        ((1, 8, 5, 5), "800-byte inputs: the second would start off a 64-byte boundary"),
    ],
)
def test_concat_that_cannot_be_in_place_still_runs(shape, why):
    sess = _session(_fire, shape)
    assert "concat" not in sess.plan.elided, why
    x = _x(shape)
    np.testing.assert_allclose(sess.run({"x": x})["y"], _fire_ref(x), rtol=1e-6)


def test_input_read_by_another_op_is_not_moved():
    def build(b, x):
        e = b.Exp(x)
        c = b.Relu(b.Concat(e, b.Neg(x), axis=1))  # Relu may overwrite the concat in place, and e is read after it
        b.output(b.Add(b.ReduceSum(c, axes=[1], keepdims=1), b.ReduceSum(e, axes=[1], keepdims=1)), "y")

    sess = _session(build, (1, 16, 4, 4))
    assert "concat" not in sess.plan.elided
    x = _x((1, 16, 4, 4))
    ref = _fire_ref(x).sum(1, keepdims=True) + np.exp(x).sum(1, keepdims=True)
    np.testing.assert_allclose(sess.run({"x": x})["y"], ref, rtol=1e-5)


def test_graph_input_output_and_duplicate_inputs_are_not_moved():
    def graph_input(b, x):
        b.output(b.Concat(x, b.Neg(x), axis=1), "y")

    def graph_output(b, x):
        e = b.output(b.Exp(x), "e")
        b.output(b.Concat(e, b.Neg(x), axis=1), "y")

    def duplicate(b, x):
        e = b.Exp(x)
        b.output(b.Concat(e, e, axis=1), "y")

    x = _x((1, 16, 4, 4))
    for build, ref in [
        (graph_input, np.concatenate([x, -x], 1)),
        (graph_output, np.concatenate([np.exp(x), -x], 1)),
        (duplicate, np.concatenate([np.exp(x)] * 2, 1)),
    ]:
        sess = _session(build, x.shape)
        assert sess.plan.elided == [], build.__name__
        np.testing.assert_allclose(sess.run({"x": x})["y"], ref, rtol=1e-6)


def test_nested_concats_and_in_place_chains_compose():
    def build(b, x):
        inner = b.Concat(b.Exp(x), b.Relu(b.Neg(x)), axis=1)  # Relu runs in place on Neg's output
        b.output(b.Sigmoid(b.Concat(b.Tanh(x), inner, axis=1)), "y")

    x = _x((1, 16, 3, 4))
    sess = _session(build, x.shape)
    assert sorted(sess.plan.elided) == ["concat", "concat_1"]
    ref = 1 / (1 + np.exp(-np.concatenate([np.tanh(x), np.exp(x), np.maximum(-x, 0)], 1)))
    np.testing.assert_allclose(sess.run({"x": x})["y"], ref, rtol=1e-6)


def test_concat_along_the_last_axis_of_a_row():
    def build(b, x):
        b.output(b.Concat(b.Exp(x), b.Neg(x), b.Tanh(x), axis=-1), "y")

    x = _x((1, 1, 48))  # 192-byte inputs: every offset 64-aligned
    sess = _session(build, x.shape)
    assert sess.plan.elided == ["concat"]
    np.testing.assert_allclose(sess.run({"x": x})["y"], np.concatenate([np.exp(x), -x, np.tanh(x)], -1), rtol=1e-6)

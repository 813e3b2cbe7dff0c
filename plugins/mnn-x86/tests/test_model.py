"""A small CNN built with GraphBuilder runs entirely on x86 (fallback=False)
and matches the reference backend: conv + relu, depthwise, 1x1, pooling,
batch norm, a classifier GEMM and softmax, with the core's fusion passes on."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS

from mnn_core import GraphBuilder, Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)


def _w(rng, *shape):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def small_cnn(rng, batch=2, size=32):
    g = GraphBuilder("small_cnn")
    x = g.input("image", (batch, 3, size, size))
    y = g.Relu(g.Conv(x, g.const(_w(rng, 16, 3, 3, 3)), g.const(_w(rng, 16)), pads=[1, 1, 1, 1], strides=[2, 2]))
    y = g.Conv(y, g.const(_w(rng, 16, 1, 3, 3)), g.const(_w(rng, 16)), group=16, pads=[1, 1, 1, 1])  # depthwise
    y = g.Clip(y, min=0.0, max=6.0)
    y = g.Conv(y, g.const(_w(rng, 24, 16, 1, 1)), g.const(_w(rng, 24)))  # pointwise
    c = 24
    y = g.BatchNormalization(
        y, g.const(1 + 0.1 * _w(rng, c)), g.const(_w(rng, c)), g.const(_w(rng, c)), g.const(np.abs(_w(rng, c)) + 0.5)
    )  # folded into the conv by the core's passes
    y = g.HardSwish(y)
    y = g.MaxPool(y, kernel_shape=[2, 2], strides=[2, 2])
    y = g.Conv(y, g.const(_w(rng, 32, 24, 3, 3)), g.const(_w(rng, 32)), pads=[1, 1, 1, 1])
    y = g.Silu(y)
    y = g.GlobalAveragePool(y)  # (N, 32, 1, 1)
    y = g.Mul(y, g.const(np.linspace(0.5, 1.5, 32, dtype=np.float32).reshape(1, 32, 1, 1)))  # channel broadcast
    y = g.MatMul(y, g.const(_w(rng, 1, 10)))  # (N, 32, 1, 10)
    y = g.Add(y, g.const(_w(rng, 10)))
    g.output(g.Softmax(y, axis=1), "scores")
    return g.build()


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
def test_small_cnn_runs_on_x86_alone(isa, threads):
    rng = np.random.default_rng(7)
    graph = small_cnn(rng)
    image = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    want = Session(graph, backend="reference").run({"image": image})["scores"]
    sess = Session(graph, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa})
    assert {p.backend for p in sess.plan} == {"x86"}, str(sess.plan)
    for _ in range(2):
        got = sess.run({"image": image})["scores"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch_parallel", ["off", "on"])
def test_inputs_are_read_where_they_are(isa, threads, batch_parallel):
    """x86's executions set MNN_EXEC_INPUTS_MAY_MOVE, so run() reads the image from the caller's
    array (no copy into the arena): with the arena's copy poisoned, and from an array aligned to its
    float only (every kernel's loads are unaligned ones), the scores still match the reference."""
    rng = np.random.default_rng(10)
    graph = small_cnn(rng)
    sess = Session(
        graph, backend="x86", fallback=False, threads=threads, options={"x86.isa": isa}, batch_parallel=batch_parallel
    )
    ref = Session(graph, backend="reference")
    for k in range(3):
        image = np.empty(2 * 3 * 32 * 32 + 1 + k, np.float32)[1 + k :].reshape(2, 3, 32, 32)
        image[...] = rng.standard_normal(image.shape)
        if batch_parallel == "off":
            assert sess._current.program.movable == (True,)
            sess._current.input_views["image"][...] = np.nan
        got = sess.run({"image": image})["scores"]
        np.testing.assert_allclose(got, ref.run({"image": image})["scores"], rtol=1e-4, atol=1e-5)


def test_auto_prefers_x86_for_everything_it_claims():
    """auto never leaves an op x86 claims on the reference backend (other
    installed backends may still bid lower than x86)."""
    rng = np.random.default_rng(8)
    graph = small_cnn(rng)
    sess = Session(graph, backend="auto")
    assert not [p for p in sess.plan if p.backend == "reference"], str(sess.plan)


def test_gemm_classifier_and_new_batch_size():
    """A Gemm head and a second input shape (a second plan) on the same session."""
    rng = np.random.default_rng(9)
    g = GraphBuilder("mlp")
    x = g.input("x", ("N", 64))
    h = g.Gemm(x, g.const(_w(rng, 128, 64)), g.const(_w(rng, 128)), transB=1)
    h = g.Gelu(h)
    y = g.Gemm(h, g.const(_w(rng, 128, 10)), g.const(_w(rng, 10)))
    g.output(y, "y")
    graph = g.build()
    sess = Session(graph, backend="x86", fallback=False)
    ref = Session(graph, backend="reference")
    for n in (1, 7, 33, 0):
        xs = rng.standard_normal((n, 64)).astype(np.float32)
        np.testing.assert_allclose(sess.run({"x": xs})["y"], ref.run({"x": xs})["y"], rtol=1e-4, atol=1e-5)
    assert {p.backend for p in sess.plan} == {"x86"}

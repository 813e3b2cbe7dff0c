"""Whole networks entirely on OpenCL (fallback=False) against the reference
backend: a small CNN and a transformer encoder block built with the graph
builder, and MobileNetV2 from examples/build_models.py. Also what a run costs
the host: one segment, one input write and one output read."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn

pytestmark = needs_opencl
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "build_models.py"


def _w(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype("float32")


def small_cnn(rng):
    """conv3x3+BN+relu6, depthwise stride 2, grouped conv, 1x1, residual, pools, concat, head."""
    b = mnn.GraphBuilder("small_cnn")
    x = b.input("x", ("N", 3, 17, 15))
    y = b.Conv(x, b.const(_w(rng, 16, 3, 3, 3)), b.const(_w(rng, 16)), pads=[1, 1, 1, 1])
    y = b.BatchNormalization(
        y,
        b.const(rng.uniform(0.5, 1.5, 16).astype("float32")),
        b.const(_w(rng, 16)),
        b.const(_w(rng, 16)),
        b.const(rng.uniform(0.5, 1.5, 16).astype("float32")),
    )
    y = b.Clip(y, min=0.0, max=6.0)
    d = b.Conv(y, b.const(_w(rng, 16, 1, 3, 3)), None, pads=[1, 1, 1, 1], strides=[2, 2], group=16)
    g = b.Conv(d, b.const(_w(rng, 8, 8, 3, 3)), b.const(_w(rng, 8)), pads=[1, 1, 1, 1], group=2)
    p = b.Conv(d, b.const(_w(rng, 8, 16, 1, 1)), b.const(_w(rng, 8)))
    c = b.Relu(b.Add(b.Concat(g, p, axis=1), d))
    m = b.MaxPool(c, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    a = b.AveragePool(c, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    z = b.Mul(b.Sigmoid(m), a)
    z = b.Flatten(b.GlobalAveragePool(z), axis=1)
    logits = b.Gemm(z, b.const(_w(rng, 10, 16)), b.const(_w(rng, 10)), transB=1)
    b.output(b.Softmax(logits, axis=-1), "y")
    return b.build()


def encoder_block(rng, d=32, heads=4, seq=12):
    """Pre-norm self-attention and a GELU MLP, as in a small transformer encoder."""
    b = mnn.GraphBuilder("encoder")
    x = b.input("x", ("N", seq, d))
    dh = d // heads

    def proj(v, din, dout):
        return b.Add(b.MatMul(v, b.const(_w(rng, din, dout, scale=din**-0.5))), b.const(_w(rng, dout, scale=0.1)))

    def split_heads(v):
        return b.Transpose(b.Reshape(v, shape=[0, seq, heads, dh]), perm=[0, 2, 1, 3])

    h = b.LayerNormalization(x, b.const(np.ones(d, "float32")), b.const(np.zeros(d, "float32")), axis=-1)
    q, k, v = (split_heads(proj(h, d, d)) for _ in range(3))
    scores = b.Mul(b.MatMul(q, b.Transpose(k, perm=[0, 1, 3, 2])), b.const(np.float32(dh**-0.5)))
    att = b.MatMul(b.Softmax(scores, axis=-1), v)
    att = b.Reshape(b.Transpose(att, perm=[0, 2, 1, 3]), shape=[0, seq, d])
    x2 = b.Add(x, proj(att, d, d))
    h2 = b.LayerNormalization(x2, b.const(np.ones(d, "float32")), b.const(np.zeros(d, "float32")))
    mlp = proj(b.Gelu(proj(h2, d, 4 * d)), 4 * d, d)
    b.output(b.Add(x2, mlp), "y")
    return b.build()


def _compare(graph, feeds, rtol=1e-4, atol=1e-5, **kw):
    sess = mnn.Session(graph, backend="opencl", fallback=False, **kw)
    want = mnn.Session(graph, backend="reference").run(feeds)
    for _ in range(2):
        got = sess.run(feeds)
        assert set(sess.plan.backends()) == {"opencl"}, str(sess.plan)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=atol, err_msg=name)
    return sess


@pytest.mark.parametrize("batch", [1, 3])
def test_small_cnn(rng, batch):
    graph = small_cnn(rng)
    _compare(graph, {"x": rng.standard_normal((batch, 3, 17, 15)).astype("float32")})


def test_small_cnn_unfused_matches_too(rng):
    graph = small_cnn(rng)  # BatchNormalization and Clip as their own kernels
    _compare(graph, {"x": rng.standard_normal((2, 3, 17, 15)).astype("float32")}, optimize=False)


def test_encoder_block(rng):
    graph = encoder_block(rng)
    _compare(graph, {"x": rng.standard_normal((2, 12, 32)).astype("float32")}, rtol=1e-4, atol=2e-5)


def test_one_segment_and_one_wait_per_run(rng):
    graph = small_cnn(rng)
    backend = opencl_backend()
    x = rng.standard_normal((1, 3, 17, 15)).astype("float32")
    for copies, per_run in (("python", (3, 3)), ("c", (0, 0))):  # per run: the input in, the output out
        sess = mnn.Session(graph, backend="opencl", fallback=False, options={"opencl.run_copies": copies})
        sess.run({"x": x})
        segment = backend.segments[-1]
        steps = len(sess.plan) - len(sess.plan.elided)  # views (Flatten) alias their input: no step
        assert segment["ops"] == steps and segment["launches"] >= steps
        arena = sess._current.arenas["opencl"]
        reads, writes = arena.reads, arena.writes
        for _ in range(3):
            sess.run({"x": x})
        assert (arena.reads - reads, arena.writes - writes) == per_run  # the C copies bypass write/read


def test_weights_are_uploaded_once(rng):
    graph = small_cnn(rng)
    sess = mnn.Session(graph, backend="opencl", fallback=False, options={"opencl.run_copies": "python"})
    sess.resize({"x": (1, 3, 17, 15)})
    arena = sess._current.arenas["opencl"]
    assert arena.writes == len(sess.graph.initializers)  # each weight once, at resize (after BN folding)
    before = arena.writes
    sess.run({"x": rng.standard_normal((1, 3, 17, 15)).astype("float32")})
    assert arena.writes - before == 1


def test_mixed_placement_with_fallback():
    """An op OpenCL does not claim runs on the reference between two OpenCL segments."""
    b = mnn.GraphBuilder()
    x = b.input("x", (2, 6))
    y = b.Relu(b.Mul(x, b.const(np.full(6, 2.0, "float32"))))
    y = b.CumSum(y, axis=1)  # not an OpenCL op
    b.output(b.Add(y, b.const(np.ones(6, "float32"))), "out")
    sess = mnn.Session(b.build(), backend="opencl")
    assert [p.backend for p in sess.plan] == ["opencl", "opencl", "reference", "opencl"]
    xv = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
    np.testing.assert_allclose(sess.run({"x": xv})["out"], np.cumsum(np.maximum(2 * xv, 0), axis=1) + 1, rtol=1e-6)


@pytest.mark.skipif(not EXAMPLES.exists(), reason="examples/build_models.py is not in this checkout")
def test_mobilenet_v2_entirely_on_opencl(rng):
    spec = importlib.util.spec_from_file_location("build_models", EXAMPLES)
    models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(models)
    graph = models.mobilenet_v2(1)
    x = rng.standard_normal((1, 3, 224, 224)).astype("float32")
    sess = mnn.Session(graph, backend="opencl", fallback=False)
    want = mnn.Session(graph, backend="reference").run({"input": x})["logits"]
    got = sess.run({"input": x})["logits"]
    assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()


def test_each_input_shape_gets_its_plan(rng):
    graph = small_cnn(rng)
    sess = mnn.Session(graph, backend="opencl", fallback=False)
    ref = mnn.Session(graph, backend="reference")
    for batch in (1, 3, 1, 0):
        x = rng.standard_normal((batch, 3, 17, 15)).astype("float32")
        got = sess.run({"x": x})["y"]
        np.testing.assert_allclose(got, ref.run({"x": x})["y"], rtol=1e-4, atol=1e-5)
    assert len(sess._plans) == 3


def test_auto_placement_runs(rng):
    # (not small_cnn: mnn_core's place_auto fails on an absent optional input (a Conv
    # without bias) when a non-host domain bids -- reported)
    graph = encoder_block(rng)
    x = rng.standard_normal((2, 12, 32)).astype("float32")
    sess = mnn.Session(graph, backend="auto")
    np.testing.assert_allclose(
        sess.run({"x": x})["y"], mnn.Session(graph, backend="reference").run({"x": x})["y"], rtol=1e-4, atol=1e-5
    )

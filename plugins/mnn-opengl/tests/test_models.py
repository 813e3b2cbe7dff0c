"""Whole networks entirely on OpenGL (fallback=False) against the reference
backend: MobileNetV2, ResNet-18 and SqueezeNet 1.1 from examples/build_models.py
(seeded weights) at a small input size, so they run in seconds on llvmpipe
(MNN_OPENGL_SLOW=1, or a GPU, runs them at 224x224 too); and what a plan
looks like: one segment, weights uploaded once, one read-back per output."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn
from mnn_core.graph.ir import TensorInfo

pytestmark = needs_opengl

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples")
needs_examples = pytest.mark.skipif(
    not os.path.exists(os.path.join(EXAMPLES, "build_models.py")),
    reason="examples/build_models.py is not here (not a source checkout)",
)


def _model(name, batch, size):
    sys.path.insert(0, EXAMPLES)
    from build_models import MODELS

    graph = MODELS[name](batch)
    graph.inputs["input"] = TensorInfo((batch, 3, size, size), "float32")  # the head is size-independent
    return graph


def _software() -> bool:
    from mnn_core.plugins import get_plugins

    return bool(get_plugins().backends["opengl"].devices()[0].extra.get("software", True))


def _check(graph, feeds, tol):
    sess = mnn.Session(graph, backend="opengl", fallback=False)
    got = sess.run(feeds)
    assert set(sess.plan.backends()) == {"opengl"}, str(sess.plan)
    want = mnn.Session(graph, backend="reference").run(feeds)
    for key, expected in want.items():
        err = np.abs(got[key] - expected).max() / np.abs(expected).max()
        assert err < tol, f"{graph.name}: relative error {err:.2e}"
    return sess


@needs_examples
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18", "squeezenet1_1"])
@pytest.mark.parametrize("batch, size", [(1, 64), (2, 48)])
def test_model_entirely_on_opengl(name, batch, size):
    x = np.random.default_rng(batch).standard_normal((batch, 3, size, size)).astype("float32")
    _check(_model(name, batch, size), {"input": x}, 1e-4)


@needs_examples
@pytest.mark.skipif(
    os.environ.get("MNN_OPENGL_SLOW") != "1" and _software(),
    reason="224x224 CNNs take 5-20 s per run on llvmpipe; set MNN_OPENGL_SLOW=1 to run them",
)
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18", "squeezenet1_1"])
def test_model_at_224(name):
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    _check(_model(name, 1, 224), {"input": x}, 1e-4)


def _w(rng, *shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype("float32")


def small_net(rng):
    """BatchNorm kept (Sigmoid after it, nothing to fold into), depthwise with
    dilation, grouped strided conv, average pool, resize, pad, slice, transpose, matmul,
    layer norm, log-softmax: what the CNNs above do not use."""
    b = mnn.GraphBuilder("gl_small")
    x = b.input("x", ("N", 4, 13, 11))
    y = b.Sigmoid(x)
    y = b.BatchNormalization(
        y,
        b.const(rng.uniform(0.5, 1.5, 4).astype("float32")),
        b.const(_w(rng, 4)),
        b.const(_w(rng, 4)),
        b.const(rng.uniform(0.5, 2, 4).astype("float32")),
    )
    y = b.Conv(y, b.const(_w(rng, 4, 1, 3, 3)), b.const(_w(rng, 4)), pads=[2, 2, 2, 2], dilations=[2, 2], group=4)
    y = b.Conv(y, b.const(_w(rng, 6, 2, 3, 3)), None, pads=[1, 0, 1, 0], strides=[2, 1], group=2)
    y = b.AveragePool(y, kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1])
    y = b.Resize(y, scales=[1.0, 1.0, 1.5, 1.0], mode="linear")
    y = b.Pad(y, pads=[0, 0, 1, 0, 0, 0, 0, 2], mode="reflect")
    y = b.Slice(y, starts=[0, 1], ends=[6, 9], axes=[1, 3])
    y = b.Transpose(y, perm=[0, 2, 1, 3])  # N, H, C, W
    y = b.MatMul(y, b.const(_w(rng, 8, 5)))
    y = b.LayerNormalization(y, b.const(_w(rng, 5)), b.const(_w(rng, 5)))
    b.output(b.LogSoftmax(b.Tanh(y), axis=1), "out")
    return b.build()


def test_small_net_covers_the_other_kernels(rng):
    x = rng.standard_normal((3, 4, 13, 11)).astype("float32")
    _check(small_net(rng), {"x": x}, 1e-4)


def test_one_segment_weights_once_one_readback_per_output(rng):
    import mnn_opengl

    graph = small_net(rng)
    x = rng.standard_normal((2, 4, 13, 11)).astype("float32")
    sess = mnn.Session(graph, backend="opengl", fallback=False)
    first = sess.run({"x": x})["out"]
    mine = [s for s in mnn_opengl.segments().values() if s.names[-1] == graph.nodes[-1].name]
    assert len(mine) >= 1 and mine[-1].barriers >= 1
    arena = mine[-1].arena
    writes, reads = arena.writes, arena.reads
    for _ in range(3):
        again = sess.run({"x": x})["out"]
        np.testing.assert_array_equal(again, first)  # replays are deterministic
    assert arena.writes - writes == 3  # the input only: weights stay uploaded
    assert arena.reads - reads == 3  # one read-back per output per run


def test_runs_from_other_threads(rng):
    """GL contexts are per thread: the segment makes its context current wherever it runs."""
    graph = small_net(rng)
    x = rng.standard_normal((1, 4, 13, 11)).astype("float32")
    sess = mnn.Session(graph, backend="opengl", fallback=False)
    want = sess.run({"x": x})["out"]
    results = []
    threads = [threading.Thread(target=lambda: results.append(sess.run({"x": x})["out"])) for _ in range(2)]
    for t in threads:
        t.start()
        t.join()
    assert len(results) == 2
    for got in results:
        np.testing.assert_array_equal(got, want)


def test_wrong_input_shape_is_a_clear_error(rng):
    sess = mnn.Session(small_net(rng), backend="opengl", fallback=False)
    with pytest.raises(Exception, match="x"):
        sess.run({"x": np.zeros((1, 4, 13), "float32")})


def test_unsupported_op_under_fallback_false_names_op_and_backend():
    b = mnn.GraphBuilder("g")
    x = b.input("x", (2, 3, 4))
    b.output(b.Atan(x), "y")
    with pytest.raises(Exception, match="Atan.*opengl|opengl.*Atan"):
        mnn.Session(b.build(), backend="opengl", fallback=False)


def test_mixed_placement_with_fallback(rng):
    """An op OpenGL lacks runs on the reference backend; the copies between domains are correct."""
    b = mnn.GraphBuilder("mixed")
    x = b.input("x", (2, 3, 5))
    y = b.ReduceMean(b.Atan(b.Relu(x)), axes=[2], keepdims=1)
    b.output(b.Softmax(b.Mul(y, b.const(_w(rng, 3, 1))), axis=1), "y")
    graph = b.build()
    xv = rng.standard_normal((2, 3, 5)).astype("float32")
    got = mnn.Session(graph, backend="opengl").run({"x": xv})["y"]
    want = mnn.Session(graph, backend="reference").run({"x": xv})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

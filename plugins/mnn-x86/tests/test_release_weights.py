"""Weights held once: x86 declares the constants it packed (CExecution.packed), the session frees
its own folded copies as soon as the last reader has packed them (mnn_core/weights.py), derives
them again from the model for a new input shape, and refuses a model changed since."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

import mnn_core.weights
from mnn_core import GraphBuilder, MnnError, Session, save


def _w(rng, *shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def cnn(seed=0):
    """Two 3x3 Conv+BN (folded by the core's passes into arrays only the session holds), a 1x1 and
    a classifier GEMM (the model's own arrays); the batch is dynamic: each new batch is a new plan."""
    rng = np.random.default_rng(seed)
    g = GraphBuilder("released")
    x = g.input("x", ("N", 32, 15, 13))
    y = x
    for cin in (32, 64):  # 3x3 convs of 74 and 147 KB, each folded with its batch norm
        y = g.Conv(y, g.const(_w(rng, 64, cin, 3, 3)), pads=[1, 1, 1, 1])
        y = g.Relu(
            g.BatchNormalization(
                y,
                g.const(1 + 0.1 * _w(rng, 64)),
                g.const(_w(rng, 64)),
                g.const(_w(rng, 64)),
                g.const(np.abs(_w(rng, 64)) + 0.5),
            )
        )
    y = g.Conv(y, g.const(_w(rng, 128, 64, 1, 1)), g.const(_w(rng, 128)))
    y = g.Flatten(g.GlobalAveragePool(y))
    g.output(g.Gemm(y, g.const(_w(rng, 128, 200)), g.const(_w(rng, 200))), "y")
    return g.build()


def _x(batch, seed=1):
    return np.random.default_rng(seed).standard_normal((batch, 32, 15, 13)).astype(np.float32)


def _placeholders(sess):
    return sorted(n for n, a in sess.graph.initializers.items() if a.size > 1 and not any(a.strides))


def test_folded_weights_are_freed_and_new_shapes_match(monkeypatch):
    freed = []
    release = mnn_core.weights.ReleasedWeights.release

    def watch(self, graph, name):
        arr = graph.initializers[name]
        done = release(self, graph, name)
        if done:
            freed.append(weakref.ref(arr))
        return done

    monkeypatch.setattr(mnn_core.weights.ReleasedWeights, "release", watch)
    graph = cnn()
    sess, ref = Session(graph, backend="x86", fallback=False, threads=2), Session(graph, backend="reference")
    for batch in (2, 3, 2, 5):  # 3 and 5 are new plans: the weights derived again from `graph`
        got, want = sess.run({"x": _x(batch)})["y"], ref.run({"x": _x(batch)})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert _placeholders(sess), "the folded conv weights should be released after packing"
    assert len(freed) >= 3 * len(_placeholders(sess))
    assert all(r() is None for r in freed), "a released weight is still held somewhere"
    # arrays the model itself holds stay: freeing the session's reference would free nothing
    assert all(
        sess.graph.initializers[n] is a
        for n, a in graph.initializers.items()
        if n in sess.graph.initializers and a.nbytes >= mnn_core.weights.MIN_BYTES
    )


def test_release_weights_false_keeps_them():
    sess = Session(cnn(), backend="x86", fallback=False, release_weights=False)
    sess.run({"x": _x(2)})
    assert _placeholders(sess) == []


def test_a_model_changed_since_is_an_error_for_a_new_shape():
    graph = cnn()
    sess = Session(graph, backend="x86", fallback=False)
    before = sess.run({"x": _x(2)})["y"]
    conv = graph.nodes[0].inputs[1]
    graph.initializers[conv] = graph.initializers[conv] * 2  # a fine-tuning step, say
    with pytest.raises(MnnError, match="changed since this session was created.*release_weights=False"):
        sess.run({"x": _x(3)})
    np.testing.assert_array_equal(sess.run({"x": _x(2)})["y"], before)  # plans made before still run


def test_a_model_file_is_read_again_and_missing_is_an_error(tmp_path):
    path = tmp_path / "cnn.mnn"
    save(cnn(), path)
    sess, ref = Session(path, backend="x86", fallback=False), Session(cnn(), backend="reference")
    for batch in (2, 4):
        np.testing.assert_allclose(
            sess.run({"x": _x(batch)})["y"], ref.run({"x": _x(batch)})["y"], rtol=1e-4, atol=1e-4
        )
    path.unlink()
    with pytest.raises(MnnError, match="cannot read the weights again from file .*cnn.mnn"):
        sess.run({"x": _x(3)})

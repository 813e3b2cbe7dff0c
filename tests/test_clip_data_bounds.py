"""A Clip whose bound follows the data plans as Max/Min instead of keeping the graph eager."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.graph.evaluate import evaluate
from mnn_core.graph.ir import Graph, Node, TensorInfo


def _log_mel_floor(with_max: bool) -> Graph:
    """y = Clip(x, max(x) - 80[, 10]): a spectrogram floored 80 below its peak."""
    g = Graph(name="floor", inputs={"x": TensorInfo(("T", 32))}, outputs=["y"])
    g.initializers["db"] = np.array(80, np.float32)
    g.initializers["top"] = np.array(10, np.float32)
    g.nodes += [
        Node("ReduceMax", ["x"], ["peak"], {"keepdims": 0}, "peak"),
        Node("Sub", ["peak", "db"], ["floor"], {}, "floor"),
        Node("Clip", ["x", "floor"] + (["top"] if with_max else []), ["y"], {}, "clip"),
    ]
    return g


@pytest.mark.parametrize("with_max", [False, True])
def test_clip_on_a_data_bound_is_planned(with_max):
    graph = _log_mel_floor(with_max)
    sess = mnn.Session(graph, backend="reference")
    assert not sess.eager
    for t in (5, 17):
        x = (np.random.default_rng(t).standard_normal((t, 32)) * 60).astype(np.float32)
        got = sess.run({"x": x})["y"]
        np.testing.assert_array_equal(got, evaluate(graph, {"x": x})["y"])
        assert got.max() <= 10 if with_max else got.min() >= x.max() - 80
    ops = [p.op for p in sess.plan]
    assert "Clip" not in ops and "Max" in ops and ("Min" in ops) == with_max


def test_a_constant_bound_stays_a_clip():
    g = Graph(name="relu6", inputs={"x": TensorInfo((4,))}, outputs=["y"])
    g.initializers["lo"] = np.array(0, np.float32)
    g.initializers["hi"] = np.array(6, np.float32)
    g.nodes.append(Node("Clip", ["x", "lo", "hi"], ["y"], {}, "clip"))
    sess = mnn.Session(g, backend="reference")
    np.testing.assert_array_equal(sess.run({"x": np.array([-1, 3, 7, 0], np.float32)})["y"], [0, 3, 6, 0])
    assert [p.op for p in sess.plan] == ["Clip"]

"""Session(batch_parallel=...): a batch run as single images on several threads (mnn_core/runtime/batch_split.py),
and the check that a model treats its images independently (mnn_core/graph/batch.py)."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core import GraphBuilder, Session
from mnn_core.errors import MnnError
from mnn_core.graph.batch import not_separable


def _w(rng, *shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


#: an image size whose activations (60 bytes a pixel once Conv and Relu are one op: 1.2 MB) pass
#: split_pays' 1 MB
BIG = (140, 140)


def _convnet(batch=5, tail=None, hw=(9, 11)):
    """Conv -> Relu -> pool -> Concat (channels) -> Flatten -> Gemm; `tail(g, y)` may replace the head."""
    rng = np.random.default_rng(0)
    g = GraphBuilder("net")
    x = g.input("x", (batch, 3, *hw))
    a = g.Relu(g.Conv(x, g.const(_w(rng, 4, 3, 3, 3)), g.const(_w(rng, 4)), pads=[1, 1, 1, 1]))
    b = g.Conv(x, g.const(_w(rng, 2, 3, 1, 1)))
    y = g.GlobalAveragePool(g.Concat(a, b, axis=1))
    if tail is None:
        y = g.Gemm(g.Flatten(y, axis=1), g.const(_w(rng, 7, 6)), g.const(_w(rng, 7)), transB=1)
    else:
        y = tail(g, y)
    g.output(y, "y")
    return g.build(), {"x": rng.standard_normal((batch, 3, *hw)).astype(np.float32)}


def _reason(graph, feeds):
    return not_separable(graph, graph.infer({n: type(i)(feeds[n].shape, i.dtype) for n, i in graph.inputs.items()}))


def test_a_convnet_is_separable():
    graph, feeds = _convnet()
    assert _reason(graph, feeds) is None


@pytest.mark.parametrize(
    "tail,why",
    [
        (lambda g, y: g.ReduceMean(y, axes=[0, 1]), "ReduceMean"),
        (lambda g, y: g.Concat(y, y, axis=0), "axis 0"),
        (lambda g, y: g.Reshape(y, shape=[5, -1]), "first dimension"),
        (lambda g, y: g.Transpose(y, perm=[1, 0, 2, 3]), "moves axis 0"),
        (lambda g, y: g.Add(y, g.const(np.ones((5, 1, 1, 1), np.float32))), "broadcasts over the batch"),
        (lambda g, y: g.Softmax(g.Flatten(y, axis=0), axis=1), "Flatten"),
    ],
)
def test_ops_that_mix_the_images_are_named(tail, why):
    graph, feeds = _convnet(tail=tail)
    reason = _reason(graph, feeds)
    assert reason is not None and why in reason


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_batch_as_images_matches_the_whole_batch(threads):
    graph, feeds = _convnet(batch=5, hw=BIG)
    split = Session(graph, backend="reference", threads=threads, batch_parallel="auto")
    whole = Session(graph, backend="reference", threads=threads, batch_parallel="off")
    assert split._split_for({"x": feeds["x"].shape}) is not None
    assert whole._split_for({"x": feeds["x"].shape}) is None
    want = whole.run(feeds)["y"]
    for _ in range(2):
        np.testing.assert_allclose(split.run(feeds)["y"], want, rtol=1e-5, atol=1e-6)
    # a profile is of the whole-batch plan, which a split session still makes when asked
    np.testing.assert_allclose(split.run(feeds, profile=True)["y"], want, rtol=1e-5, atol=1e-6)
    assert split.profile()


def test_copy_false_hands_out_the_sessions_own_arrays():
    graph, feeds = _convnet(batch=4)
    sess = Session(graph, backend="reference", threads=2, batch_parallel="on")
    first = sess.run(feeds, copy=False)["y"]
    kept = first.copy()
    again = sess.run({"x": feeds["x"][::-1].copy()}, copy=False)["y"]
    assert again is first  # reused, as the docstring of run says
    np.testing.assert_allclose(again, kept[::-1], rtol=1e-5, atol=1e-6)


def test_auto_splits_where_an_image_outweighs_the_weights():
    graph, feeds = _convnet(batch=4, hw=BIG)
    shape = feeds["x"].shape
    for threads in (1, 2):  # at one thread the images run in turn, each in a one-image arena
        assert Session(graph, backend="reference", threads=threads)._split_for({"x": shape}) is not None
    one, _ = _convnet(batch=1, hw=BIG)
    assert Session(one, backend="reference", threads=2)._split_for({"x": (1, *shape[1:])}) is None
    small, _ = _convnet(batch=4)  # 7 KB of activations an image: the hand-off would cost more
    assert Session(small, backend="reference", threads=2)._split_for({"x": (4, 3, 9, 11)}) is None
    # weights heavier than an image's activations (a 6 x 300000 Gemm: 7.2 MB) are read once per batch
    heavy, _ = _convnet(
        batch=4, hw=BIG, tail=lambda g, y: g.Gemm(g.Flatten(y, axis=1), g.const(np.zeros((6, 300_000), np.float32)))
    )
    assert Session(heavy, backend="reference", threads=2)._split_for({"x": shape}) is None
    # "on" splits whatever the sizes, at one thread too: the images in turn
    on = Session(small, backend="reference", threads=1, batch_parallel="on")
    small_feeds = {"x": np.random.default_rng(1).standard_normal((4, 3, 9, 11)).astype(np.float32)}
    np.testing.assert_allclose(
        on.run(small_feeds)["y"], Session(small, backend="reference").run(small_feeds)["y"], rtol=1e-5
    )


def test_on_refuses_a_model_that_mixes_images_and_auto_runs_it_whole():
    graph, feeds = _convnet(tail=lambda g, y: g.ReduceMean(y, axes=[0]))
    with pytest.raises(MnnError, match="mixes the images.*ReduceMean"):
        Session(graph, backend="reference", threads=2, batch_parallel="on")
    got = Session(graph, backend="reference", threads=2, batch_parallel="auto").run(feeds)["y"]
    want = Session(graph, backend="reference", batch_parallel="off").run(feeds)["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_auto_is_the_default_and_a_split_session_still_explains_its_plan():
    graph, feeds = _convnet(batch=4, hw=BIG)
    off = Session(graph, backend="reference", threads=2, batch_parallel="off")
    assert off._split_for({"x": feeds["x"].shape}) is None
    sess = Session(graph, backend="reference", threads=2)
    assert sess.batch_parallel == "auto"
    sess.run(feeds)
    assert sess._split_for({"x": feeds["x"].shape}) is not None
    assert "Conv" in str(sess.plan)  # the whole-batch plan, made when asked


def test_bad_value_is_an_error():
    graph, _ = _convnet()
    with pytest.raises(MnnError, match="batch_parallel must be one of"):
        Session(graph, backend="reference", batch_parallel="yes")

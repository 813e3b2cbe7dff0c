"""mnn_core/runtime/weights.py: constants released from a session's graph after packing, derived again
from the model (a Graph, or a file read again) and checked against their CRC-32."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core import GraphBuilder, MnnError, Session, save
from mnn_core.graph.passes import optimize
from mnn_core.weights import MIN_BYTES, ReleasedWeights, placeholder


def model():
    rng = np.random.default_rng(0)
    g = GraphBuilder("w")
    x = g.input("x", ("N", 64))
    big = g.const(rng.standard_normal((64, 512)).astype(np.float32))  # 128 KB: worth releasing
    small = g.const(rng.standard_normal((512,)).astype(np.float32))  # 2 KB: stays
    g.output(g.Add(g.MatMul(g.Mul(x, g.const(np.float32(2))), big), small), "y")
    return g.build(), big, small


def derived(graph):
    """A session's own copy of a constant, as folding makes it: the model holds another array."""
    out = optimize(graph)
    out.initializers = {n: a.copy() for n, a in out.initializers.items()}
    return out


def test_release_and_restore_round_trip():
    graph, big, small = model()
    mine = derived(graph)
    kept = mine.initializers[big]
    w = ReleasedWeights(graph, derived)
    assert w.release(mine, big) and not w.release(mine, small) and len(w) == 1
    held = mine.initializers[big]
    assert held.shape == kept.shape and held.dtype == kept.dtype and not any(held.strides)
    assert not w.release(mine, big)  # once
    w.restore(mine)
    np.testing.assert_array_equal(mine.initializers[big], kept)
    assert len(w) == 0


def test_arrays_the_model_holds_are_not_released():
    graph, big, _ = model()
    mine = graph.copy()  # shares the arrays (optimize=False)
    assert not ReleasedWeights(graph, type(graph).copy).release(mine, big)
    assert mine.initializers[big] is graph.initializers[big]


def test_a_changed_model_is_refused():
    graph, big, _ = model()
    mine = derived(graph)
    w = ReleasedWeights(graph, derived)
    w.release(mine, big)
    graph.initializers[big] = graph.initializers[big] + 1
    with pytest.raises(MnnError, match=f"constant '{big}' of the model changed since"):
        w.restore(mine)
    assert not any(mine.initializers[big].strides)  # still the placeholder: nothing half-restored


def test_a_missing_file_is_refused(tmp_path):
    graph, big, _ = model()
    path = tmp_path / "m.mnn"
    save(graph, path)
    mine = derived(graph)
    w = ReleasedWeights(path, derived)
    w.release(mine, big)
    w.restore(mine)  # the file is read again
    w.release(mine, big)
    path.unlink()
    with pytest.raises(MnnError, match="cannot read the weights again from file .*m.mnn.*release_weights=False"):
        w.restore(mine)


def test_placeholder_holds_one_element():
    a = np.ones((300, 300), np.float32)
    p = placeholder(a)
    assert p.shape == a.shape and p.dtype == a.dtype and p.base.nbytes == 4 and not p.flags.writeable
    assert MIN_BYTES > 4


def test_reference_kernels_keep_their_constants():
    """Python executions read constants at run: nothing is released under them."""
    graph, big, small = model()
    sess = Session(graph, backend="reference")
    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    want = (x * 2) @ graph.initializers[big] + graph.initializers[small]
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-5, atol=1e-4)
    assert len(sess._released) == 0
    assert all(any(a.strides) or a.size <= 1 for a in sess.graph.initializers.values())

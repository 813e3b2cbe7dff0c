"""x86 QLinearAdd (uint8, equal shapes), every ISA this CPU runs, bit-exact against the reference
(docs/QUANT.md rule 5); broadcasting declines to the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86 import isa as x86_isa

import mnn_core as mnn
from mnn_core.graph.builder import GraphBuilder

ISAS = x86_isa.supported()
SHAPES = [(1,), (7,), (15,), (17,), (1, 3, 5, 7), (2, 64, 28, 28), (1, 5, 100003)]  # odd tails of 8 and 16


def _graph(shape_a, shape_b, params):
    sa, za, sb, zb, sc, zc = params
    b = GraphBuilder("qadd")
    a, bb = b.input("a", shape_a, "uint8"), b.input("b", shape_b, "uint8")
    y = b.QLinearAdd(a, b.const(sa), b.const(za), bb, b.const(sb), b.const(zb), b.const(sc), b.const(zc))
    b.output(y, "y")
    return b.build()


def _params(rng, ties):
    if ties:  # multipliers 0.5 and 0.25: many sums end in .5 exactly, rounding ties to even
        return (
            np.float32(0.5),
            np.uint8(rng.integers(0, 256)),
            np.float32(0.25),
            np.uint8(rng.integers(0, 256)),
            np.float32(1.0),
            np.uint8(rng.integers(0, 256)),
        )
    return (
        np.float32(rng.uniform(0.005, 0.1)),
        np.uint8(rng.integers(0, 256)),
        np.float32(rng.uniform(0.005, 0.1)),
        np.uint8(rng.integers(0, 256)),
        np.float32(rng.uniform(0.01, 0.2)),
        np.uint8(rng.integers(0, 256)),
    )


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("ties", [False, True], ids=["random", "ties"])
def test_qlinear_add_bit_exact(isa, shape, ties):
    rng = np.random.default_rng(int(np.prod(shape)) + ties)
    graph = _graph(shape, shape, _params(rng, ties))
    feed = {"a": rng.integers(0, 256, shape).astype(np.uint8), "b": rng.integers(0, 256, shape).astype(np.uint8)}
    want = mnn.Session(graph, backend="reference").run(feed)["y"]
    session = mnn.Session(graph, backend="x86", fallback=False, options={"x86.isa": isa})
    assert session.plan.backends() == {"x86": 1}
    got = session.run(feed)["y"]
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)


def test_qlinear_add_many_random_scales_are_bit_exact_where_an_fma_would_not_be():
    """Random multipliers over a large tensor meet sums near .5; a fused multiply-add (one rounding instead of
    two) would move some of them, so this fails if the compiler contracts the kernel's mul + add."""
    rng = np.random.default_rng(7)
    for isa in ISAS:
        for _ in range(4):
            shape = (1 << 16,)
            graph = _graph(shape, shape, _params(rng, False))
            feed = {
                "a": rng.integers(0, 256, shape).astype(np.uint8),
                "b": rng.integers(0, 256, shape).astype(np.uint8),
            }
            want = mnn.Session(graph, backend="reference").run(feed)["y"]
            got = mnn.Session(graph, backend="x86", fallback=False, options={"x86.isa": isa}).run(feed)["y"]
            np.testing.assert_array_equal(got, want)


def test_qlinear_add_broadcast_falls_back_to_the_reference():
    rng = np.random.default_rng(3)
    graph = _graph((2, 4, 3, 3), (4, 1, 1), _params(rng, False))
    with pytest.raises(Exception, match="QLinearAdd"):
        mnn.Session(graph, backend="x86", fallback=False)
    feed = {
        "a": rng.integers(0, 256, (2, 4, 3, 3)).astype(np.uint8),
        "b": rng.integers(0, 256, (4, 1, 1)).astype(np.uint8),
    }
    session = mnn.Session(graph, backend="x86")
    assert session.plan.backends() == {"reference": 1}
    np.testing.assert_array_equal(session.run(feed)["y"], mnn.Session(graph, backend="reference").run(feed)["y"])

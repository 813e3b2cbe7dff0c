"""Pooling at stride 2 whose last vector of a row reads one element past the row (the odd lane of a vld2q,
never used): taken where that element is readable (a later row, the next plane, the padded scratch), the
scalar tail where it is not (the last row of the last plane). MaxPool and AveragePool, windows 2 x 2, 1 x 2,
3 x 3 and 2 x 3, widths that are and are not multiples of 8, padding, one and two threads. Oracle: the
reference backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_arm

from mnn_core import GraphBuilder, Session

pytestmark = needs_arm

CASES = [  # op, (N, C, H, W), kernel, strides, pads
    ("MaxPool", (1, 24, 72, 32), (2, 2), (2, 2), (0, 0, 0, 0)),
    ("MaxPool", (1, 48, 32, 16), (1, 2), (1, 2), (0, 0, 0, 0)),
    ("MaxPool", (1, 5, 6, 8), (2, 2), (2, 2), (0, 0, 0, 0)),
    ("MaxPool", (2, 3, 9, 17), (3, 3), (2, 2), (0, 0, 0, 0)),
    ("MaxPool", (1, 4, 7, 16), (2, 3), (2, 2), (1, 1, 0, 1)),
    ("AveragePool", (1, 6, 10, 24), (2, 2), (2, 2), (0, 0, 0, 0)),
    ("AveragePool", (1, 3, 5, 9), (3, 3), (2, 2), (1, 1, 1, 1)),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op, shape, kernel, strides, pads", CASES)
def test_pool_rows(op, shape, kernel, strides, pads, threads):
    rng = np.random.default_rng(shape[1] * 7 + shape[3])
    g = GraphBuilder("pool")
    g.output(
        getattr(g, op)(
            g.input("x", shape, "float32"), kernel_shape=list(kernel), strides=list(strides), pads=list(pads)
        ),
        "y",
    )
    graph = g.build()
    feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
    want = Session(graph, backend="reference").run(feeds)["y"]
    sess = Session(graph, backend="arm", fallback=False, threads=threads)
    assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
    np.testing.assert_allclose(sess.run(feeds)["y"], want, rtol=1e-6, atol=1e-6)

"""Accuracy of the vectorized math against float64 truth on a dense grid, on
every ISA level: relative error below 1e-6 wherever the value is a normal
float (the tails included, where a naive x/2 * (1 + erf) would cancel)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import ISAS, one_op_graph

from mnn_core.session import Session

X = np.concatenate([np.linspace(-30, 30, 200001), np.geomspace(1e-7, 2, 2000), -np.geomspace(1e-7, 2, 2000)])
X = X.astype(np.float32)
X64 = X.astype(np.float64)
_ERFC = np.vectorize(math.erfc)
TRUTH = {
    "Gelu": lambda x: 0.5 * x * _ERFC(-x / math.sqrt(2.0)),
    "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "Silu": lambda x: x / (1.0 + np.exp(-x)),
    "Tanh": np.tanh,
}


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("op", sorted(TRUTH))
def test_relative_error(isa, op):
    graph, feeds = one_op_graph(op, [X], {}, ())
    sess = Session(graph, backend="x86", fallback=False, optimize=False, options={"x86.isa": isa})
    got = sess.run(feeds)["out"].astype(np.float64)
    want = TRUTH[op](X64)
    normal = np.abs(want) > 1.2e-38
    rel = np.abs(got - want)[normal] / np.abs(want[normal])
    worst = int(np.argmax(rel))
    assert rel.max() < 1e-6, f"{op} on {isa}: relative error {rel.max():.2e} at x={X[normal][worst]}"
    assert np.all(np.abs(got[~normal]) < 1e-37)

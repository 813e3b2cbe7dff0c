"""MatMul's packing space is the calling thread's scratch (csrc/op_matmul.c): MatMuls of different
sizes, and of a B given at run (packed at each run, as a decoder's KV cache is), running at once on
two threads in sessions of their own, each get their own product, the same on every run."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from conftest import one_op_graph

from mnn_core.session import Session


def test_matmuls_on_two_threads_keep_their_packing_apart(rng):
    cases = []
    for (m, k, n), constant in (((37, 300, 70), ()), ((5, 129, 513), ()), ((64, 250, 96), (1,))):
        a = rng.standard_normal((2, m, k)).astype(np.float32)
        b = rng.standard_normal((2, k, n) if not constant else (k, n)).astype(np.float32)
        graph, feeds = one_op_graph("MatMul", [a, b], {}, constant=constant)
        sess = Session(graph, backend="x86", fallback=False, threads=1)
        cases.append((sess, feeds, a.astype(np.float64) @ b.astype(np.float64)))

    def work(case):
        sess, feeds, want = case
        first = sess.run(feeds)["out"]
        np.testing.assert_allclose(first, want, rtol=1e-4, atol=1e-3)
        for _ in range(30):
            np.testing.assert_array_equal(sess.run(feeds)["out"], first)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(work, cases * 2))

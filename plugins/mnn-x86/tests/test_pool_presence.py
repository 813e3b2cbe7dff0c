"""Workers that cannot come (op_threadpool.c): a worker that entered a job more than MNN_X86_POOL_LATE_US
after its offer, or on the caller's CPU, is passed over for a while: its items run on the caller, the same
items, so results are the same bit for bit whoever came. Each case runs in a child process, since the
pool reads its settings once; the child's pool counts come from MNN_X86_POOL_TRACE=1, and it checks its
results at two threads against one thread's and against its own first run, on shapes that do not divide
evenly. A lateness of 0 judges every worker late, one of 1e9 microseconds none (but one on the caller's
CPU)."""

from __future__ import annotations

from conftest import pool_trace_counts

# loops large enough to be offered at two threads, run often enough to clear the window in which the workers
# start and then be judged many times: a light loop (ranges), a GEMM (items), a convolution
CHILD = """
import numpy as np
from mnn_core.session import Session
from mnn_core.testing import one_node_graph

rng = np.random.default_rng(0)
r = lambda *s: rng.standard_normal(s, dtype=np.float32)
for op, inputs, attrs in [
    ("Add", [r(3, 90001), r(3, 90001)], {}),
    ("MatMul", [r(259, 513), r(513, 263)], {}),
    ("Conv", [r(1, 13, 57, 61), r(17, 13, 3, 3)], {"pads": [1, 1, 1, 1]}),
]:
    graph, feeds = one_node_graph(op, inputs, attrs, ())
    want = Session(graph, backend="reference").run(feeds)["out"]
    one = Session(graph, backend="x86", fallback=False, threads=1).run(feeds)["out"]
    np.testing.assert_allclose(one, want, rtol=1e-3, atol=1e-3, err_msg=op)
    two = Session(graph, backend="x86", fallback=False, threads=2)
    first = two.run(feeds)["out"]
    np.testing.assert_allclose(first, one, rtol=1e-5, atol=1e-5, err_msg=op)
    for _ in range(100):
        np.testing.assert_array_equal(two.run(feeds)["out"], first, err_msg=op)
"""

COUNTS = r"(\d+) (parallel jobs|workers late|beside the caller|with no worker coming)"


def _pool_counts(adapt: str, late_us: str) -> dict[str, int]:
    return pool_trace_counts(CHILD, COUNTS, MNN_X86_POOL_ADAPT=adapt, MNN_X86_POOL_LATE_US=late_us)


def test_a_late_worker_is_passed_over():
    counts = _pool_counts("16", "0")  # the workers' presence alone; every worker is late
    assert counts["workers late"] + counts["beside the caller"] > 0
    assert counts["with no worker coming"] > 0
    assert counts["parallel jobs"] > 0  # and it is offered jobs again once its pause ends


def test_a_worker_in_time_keeps_its_jobs():
    counts = _pool_counts("16", "1e9")
    assert counts["workers late"] == 0


def test_no_worker_passed_over_without_its_bit():
    counts = _pool_counts("15", "0")
    assert counts["workers late"] == 0
    assert counts["beside the caller"] == 0
    assert counts["with no worker coming"] == 0

"""The pool's verdict per loop (op_threadpool.c, "each loop"): a loop whose last job on the workers did
not come under MNN_X86_POOL_GAIN of its serial estimate runs its next calls on the caller alone; results
are the same either way. Each case runs in a child process, since the pool reads its settings once; the
child's pool counts come from MNN_X86_POOL_TRACE=1, and it checks its results at two threads against one
thread's. A gain of 0 fails every try, a gain of 1e9 passes every one."""

from __future__ import annotations

from conftest import pool_trace_counts

# loops large enough to be offered at two threads (not small jobs), run often enough to clear the
# window in which the workers start (10 ms of jobs, however fast this machine) and then be judged many times
CHILD = """
import numpy as np
from mnn_core.session import Session
from mnn_core.testing import one_node_graph

rng = np.random.default_rng(0)
for op, inputs in [
    ("Add", [rng.standard_normal((3, 90001), dtype=np.float32), rng.standard_normal((3, 90001), dtype=np.float32)]),
    ("MatMul", [rng.standard_normal((259, 513), dtype=np.float32), rng.standard_normal((513, 263), dtype=np.float32)]),
]:
    graph, feeds = one_node_graph(op, inputs, {}, ())
    one = Session(graph, backend="x86", fallback=False, threads=1).run(feeds)["out"]
    two = Session(graph, backend="x86", fallback=False, threads=2)
    for _ in range(100):
        np.testing.assert_allclose(two.run(feeds)["out"], one, rtol=1e-5, atol=1e-5, err_msg=op)
"""

COUNTS = r"(\d+) (parallel jobs|loop verdicts failed|on the caller alone \(loop\)|waits asleep)"


def _pool_counts(adapt: str, gain: str) -> dict[str, int]:
    return pool_trace_counts(CHILD, COUNTS, MNN_X86_POOL_ADAPT=adapt, MNN_X86_POOL_GAIN=gain)


def test_a_loop_whose_threads_do_not_pay_runs_on_the_caller():
    counts = _pool_counts("4", "0")  # the loops' verdicts alone; every try fails
    assert counts["loop verdicts failed"] > 0
    assert counts["on the caller alone (loop)"] > counts["loop verdicts failed"]  # the sit-outs grow
    assert counts["parallel jobs"] > 0  # and the loops are tried again


def test_a_loop_whose_threads_pay_keeps_them():
    counts = _pool_counts("4", "1e9")
    assert counts["loop verdicts failed"] == 0
    assert counts["on the caller alone (loop)"] == 0


def test_no_loop_verdicts_without_their_bit():
    counts = _pool_counts("3", "0")
    assert counts["loop verdicts failed"] == 0
    assert counts["on the caller alone (loop)"] == 0

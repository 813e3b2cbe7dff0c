"""The pool's small jobs (op_threadpool.c, "small jobs"): a job whose serial time is below
MNN_X86_POOL_SMALL_US runs on the caller alone, its first item timed before it is offered; results
are the same either way. Each case runs in a child process, since the pool reads its settings once;
the child's pool counts come from MNN_X86_POOL_TRACE=1, and it checks its results at two threads
against one thread's."""

from __future__ import annotations

import os
import re
import subprocess
import sys

# element-wise ops large enough to be cut into ranges at two threads, then a GEMM of several blocks
CHILD = """
import numpy as np
from mnn_core.session import Session
from mnn_core.testing import one_node_graph

rng = np.random.default_rng(0)
for op, inputs in [
    ("Add", [rng.standard_normal((3, 70001), dtype=np.float32), rng.standard_normal((3, 70001), dtype=np.float32)]),
    ("Tanh", [rng.standard_normal((5, 40003), dtype=np.float32)]),
    ("MatMul", [rng.standard_normal((67, 129), dtype=np.float32), rng.standard_normal((129, 257), dtype=np.float32)]),
]:
    graph, feeds = one_node_graph(op, inputs, {}, ())
    one = Session(graph, backend="x86", fallback=False, threads=1).run(feeds)["out"]
    two = Session(graph, backend="x86", fallback=False, threads=2)
    for _ in range(5):
        np.testing.assert_allclose(two.run(feeds)["out"], one, rtol=1e-5, atol=1e-5, err_msg=op)
"""


def _pool_counts(small_us: str) -> dict[str, int]:
    env = {**os.environ, "MNN_X86_POOL_TRACE": "1", "MNN_X86_POOL_SMALL_US": small_us, "MNN_X86_POOL_ADAPT": "0"}
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    line = re.search(r"mnn-x86 pool: .*", proc.stderr)
    assert line, proc.stderr
    return {k: int(v) for v, k in re.findall(r"(\d+) (parallel jobs|small|windows)", line.group(0))}


def test_jobs_below_the_threshold_run_on_the_caller():
    counts = _pool_counts("100000")  # 0.1 s: every job here is small
    assert counts["small"] > 0
    assert counts["parallel jobs"] == 0


def test_threshold_zero_offers_every_job():
    counts = _pool_counts("0")
    assert counts["small"] == 0
    assert counts["parallel jobs"] > 0

"""A worker on its caller's CPU moves to another (op_threadpool_cpu.c): the kernel wakes a task where it
last ran, so one that stayed was woken beside the caller again and again, and passed over each time.

The child sets the scene so that the worker is woken beside the caller: the caller and the worker it
starts run on the first CPU only, then the worker may run on the second too, where a spinning process
keeps that CPU busy (the kernel then has no idle CPU to wake it on but the caller's). The counts come
from MNN_X86_POOL_TRACE=1; results stay bit for bit those of the first run. With bit 32 alone
(MNN_X86_POOL_ADAPT=63) the worker stays where the spinner leaves no core to spare; bit 64 moves it
all the same."""

from __future__ import annotations

import os
import sys

import pytest
from conftest import pool_trace_counts

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux (thread affinity) and two CPUs",
)

CHILD = """
import os, subprocess, sys, threading, time
import numpy as np
from mnn_core.session import Session
from mnn_core.testing import one_node_graph

first, second = sorted(os.sched_getaffinity(0))[:2]
spin = "import os; os.sched_setaffinity(0, {%d}); exec('while True: pass')" % second
spinner = subprocess.Popen([sys.executable, "-c", spin])
try:
    os.sched_setaffinity(0, {first})  # this thread: the caller, and the worker it starts
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((259, 513), dtype=np.float32), rng.standard_normal((513, 263), dtype=np.float32)]
    graph, feeds = one_node_graph("MatMul", inputs, {}, ())
    want = Session(graph, backend="reference").run(feeds)["out"]
    two = Session(graph, backend="x86", fallback=False, threads=2)
    before = set(os.listdir("/proc/self/task"))
    got = two.run(feeds)["out"]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    for _ in range(30):
        two.run(feeds)
    for tid in set(os.listdir("/proc/self/task")) - before:  # the pool's worker, which ran on `first` only
        os.sched_setaffinity(int(tid), {first, second})
    end = time.monotonic() + 1.0  # past the longest pause a worker woken beside the caller is passed over for
    while time.monotonic() < end:
        np.testing.assert_array_equal(two.run(feeds)["out"], got)
finally:
    spinner.kill()
"""

COUNTS = r"(\d+) (beside the caller|moved off the caller's CPU|stayed \(no core to spare\))"


def test_a_worker_beside_the_caller_moves_off():
    counts = pool_trace_counts(CHILD, COUNTS, MNN_X86_POOL_ADAPT="127")
    assert counts["moved off the caller's CPU"] > 0


@pytest.mark.skipif(os.cpu_count() != 2, reason="the spinner, the caller and the worker fill two CPUs only")
def test_a_worker_stays_beside_the_caller_on_a_busy_machine():
    counts = pool_trace_counts(CHILD, COUNTS, MNN_X86_POOL_ADAPT="63")
    assert counts["moved off the caller's CPU"] == 0
    assert counts["stayed (no core to spare)"] > 0


def test_a_worker_stays_beside_the_caller_without_its_bit():
    counts = pool_trace_counts(CHILD, COUNTS, MNN_X86_POOL_ADAPT="95")  # 64 alone moves none
    assert counts["moved off the caller's CPU"] == 0
    assert counts["beside the caller"] > 0

"""A run's host copies (mvk_transfer.c, mvk_memory.c): the copy steps run in C, an upload reads the
caller's array itself, staged copies go in chunks whose memcpy and DMA overlap. Every path against
the reference backend, whole outputs bit for bit: mapped and staged memory, chunks smaller than a
tensor (more chunks than slots), uploads through device-local mapped memory, float16 storage,
several dtypes and shapes; runs from threads at once and a fork beside them; and a run allocates
nothing, on the device or in Python."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan
TESTS = os.path.dirname(os.path.abspath(__file__))


def copy_graph(shape_x=("N", 3, 5, 7), shape_i=("N", 9)):
    """Outputs that are exact functions of the inputs (negation, doubling) in three dtypes."""
    b = mnn.GraphBuilder("vk_copies")
    x = b.input("x", shape_x)
    i = b.input("i", shape_i, dtype="int64")
    j = b.input("j", shape_i, dtype="int32")
    b.output(b.Neg(x), "neg")
    b.output(b.Add(i, i), "twice64")
    b.output(b.Add(j, j), "twice32")
    return b.build()


def feeds_for(rng, n, shape_x=(3, 5, 7), shape_i=(9,)):
    return {
        "x": rng.standard_normal((n, *shape_x)).astype("float32"),
        "i": rng.integers(-(2**40), 2**40, (n, *shape_i)),
        "j": rng.integers(-(2**30), 2**30, (n, *shape_i)).astype("int32"),
    }


def assert_exact(sess, ref, feeds):
    got, want = sess.run(feeds), ref.run(feeds)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


@pytest.mark.parametrize("staging", [False, True], ids=["mapped", "staged"])
def test_copies_in_c_are_exact_and_read_the_callers_array(rng, staging):
    graph = copy_graph()
    ref = mnn.Session(graph, backend="reference")
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": staging})
    for n in (1, 4, 3, 16, 0):  # re-plans, an empty batch
        assert_exact(sess, ref, feeds_for(rng, n))
    assert set(sess._current.move_index) == {"x", "i", "j"}  # no copy of the inputs into the arena
    sess.run(feeds_for(rng, 2), profile=True)
    steps = [name for name, _ in sess.profile()]
    assert sum(s.startswith("copy:") for s in steps) == 6, steps


def test_python_copies_still_work(rng, monkeypatch):
    """MNN_VULKAN_RUN_COPIES=python: the core's own copy steps (A/B runs): same outputs."""
    monkeypatch.setenv("MNN_VULKAN_RUN_COPIES", "python")
    graph = copy_graph()
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
    assert_exact(sess, mnn.Session(graph, backend="reference"), feeds_for(rng, 3))
    assert sess._current.move_index == {}


def test_float16_storage_rounds_like_numpy(rng):
    """precision="low": inputs narrowed to float16 on the way in, widened on the way out."""
    from mnn_vulkan import device

    if not device.choose().props["fp16"]:
        pytest.skip("no float16 storage on this device")
    graph = copy_graph()
    for staging in (False, True):
        sess = mnn.Session(
            graph, backend="vulkan", fallback=False, precision="low", options={"vulkan.staging": staging}
        )
        feeds = feeds_for(rng, 5)
        got = sess.run(feeds)["neg"]
        np.testing.assert_array_equal(got, -feeds["x"].astype(np.float16).astype(np.float32))


CHUNKS = """
import sys, numpy as np, mnn_core as mnn
sys.path.insert(0, {tests!r})
from test_run_copies import copy_graph, feeds_for
from mnn_vulkan import device
rng = np.random.default_rng(0)
graph = copy_graph(("N", 3, 224, 224), ("N", 4099))
ref = mnn.Session(graph, backend="reference")
sess = mnn.Session(graph, backend="vulkan", fallback=False, options={{"vulkan.staging": {staging}}})
before = device.choose().context.copy_stats()
for n in (3, 16, 1):  # 0.6, 9.6 (147 chunks of 64 KiB: more than the 16 slots) and 0.6 MB
    feeds = feeds_for(rng, n, (3, 224, 224), (4099,))
    got, want = sess.run(feeds), ref.run(feeds)
    for name in want:
        assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name]), (n, name)
after = device.choose().context.copy_stats()
print("OK", after["in"]["copies"] - before["in"]["copies"], after["out"]["copies"] - before["out"]["copies"])
"""


@pytest.mark.parametrize(
    "env, staging",
    [
        ({"MNN_VULKAN_COPY_CHUNK": "65536"}, True),
        ({"MNN_VULKAN_COPY_CHUNK": "65536", "MNN_VULKAN_UPLOAD": "bar"}, True),
        ({}, True),
        ({"MNN_VULKAN_COPY_THREADS": "3"}, True),
        ({"MNN_VULKAN_COPY_THREADS": "3"}, False),
    ],
    ids=["64k-chunks", "64k-chunks-bar", "2m-chunks", "3-threads", "3-threads-mapped"],
)
def test_chunked_copies_are_exact(env, staging):
    """Tensors of many chunks, the slots reused round and round, in a fresh process (the chunk size,
    the upload buffer and the copy threads are the context's); "bar" writes uploads into
    device-local mapped memory, "3-threads" spreads each memcpy over three threads."""
    proc = subprocess.run(
        [sys.executable, "-c", CHUNKS.format(tests=TESTS, staging=staging)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["OK", "9", "9"]


def test_runs_from_threads_at_once(rng):
    """One session run from two threads (its runs take turns) and two more sessions of their own
    beside them, all staged: their copies share the context's staging buffer and slots."""
    graph = copy_graph()
    ref = mnn.Session(graph, backend="reference")
    shared = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
    failures = []

    def work(seed, sess):
        local = np.random.default_rng(seed)
        sess = sess or mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
        for k in range(30):
            feeds = feeds_for(local, 1 + (seed + k) % 5)
            got = sess.run(feeds)
            want = ref.run(feeds)
            failures.extend(name for name in want if not np.array_equal(got[name], want[name]))

    threads = [threading.Thread(target=work, args=(s, shared if s < 2 else None)) for s in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not failures


FORK = """
import json, os, sys, threading, numpy as np, mnn_core as mnn
sys.path.insert(0, {tests!r})
from test_run_copies import copy_graph, feeds_for
from mnn_vulkan import device
graph = copy_graph()
ref = mnn.Session(graph, backend="reference")
sess = mnn.Session(graph, backend="vulkan", fallback=False, options={{"vulkan.staging": True}})
bad, stop = [], threading.Event()
def runs():
    rng = np.random.default_rng(1)
    while not stop.is_set():
        feeds = feeds_for(rng, 3)
        got, want = sess.run(feeds), ref.run(feeds)
        bad.extend(n for n in want if not np.array_equal(got[n], want[n]))
thread = threading.Thread(target=runs)
thread.start()
children = []
for _ in range(3):  # forks while the other thread copies
    pid = os.fork()
    if pid == 0:
        os.write(1, ("CHILD " + json.dumps(device.unavailable_reason()) + "\\n").encode())  # one write
        os._exit(0)
    children.append(pid)
codes = [os.waitpid(pid, 0)[1] for pid in children]
stop.set()
thread.join()
print("PARENT " + json.dumps([codes, len(bad)]))
"""


def test_a_fork_beside_running_copies():
    """Forks while another thread runs staged copies: each child reports Vulkan unavailable and exits
    (it cannot use the parent's device), the parent's runs stay exact."""
    proc = subprocess.run([sys.executable, "-c", FORK.format(tests=TESTS)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    children = [line for line in proc.stdout.splitlines() if line.startswith("CHILD")]
    assert len(children) == 3 and all("forked" in line for line in children), proc.stdout
    parent = next(line for line in proc.stdout.splitlines() if line.startswith("PARENT"))
    assert parent == "PARENT [[0, 0, 0], 0]"


@pytest.mark.parametrize("staging", [False, True], ids=["mapped", "staged"])
def test_a_run_allocates_nothing(rng, staging):
    """After the first run: no device memory, command buffer or descriptor pool made by a run, and
    no host memory near an input's size (a 1.2 MB input: a copy of it would show)."""
    from mnn_vulkan import device

    graph = copy_graph(("N", 3, 100, 100))
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": staging})
    feeds = feeds_for(rng, 10, (3, 100, 100))
    sess.run(feeds, copy=False)
    context = device.choose().context
    made = context.allocations()
    tracemalloc.start()
    try:
        for _ in range(5):
            sess.run(feeds, copy=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert context.allocations() == made
    assert peak < 64 * 1024, peak

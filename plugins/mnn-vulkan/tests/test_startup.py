"""What a session's start pays for once: the weights uploaded together (every piece lands where it
belongs, by few staging submits), and the logical device opened early in a thread (sessions still
right, a fork still refused cleanly in the child)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_models import small_cnn
from vulkan_testing import needs_vulkan

import mnn_core as mnn

pytestmark = needs_vulkan

MIB = 1 << 20


def _pieces(rng, sizes, dtypes):
    """Arrays of the given element counts and dtypes, laid out one after another, 4-byte aligned."""
    pieces, offset = [], 0
    for n, dtype in zip(sizes, dtypes):
        if np.dtype(dtype).kind == "f":
            array = rng.standard_normal(n).astype(dtype)
        else:
            array = rng.integers(0, 200, n).astype(dtype)
        pieces.append((offset, array))
        offset += -(-array.nbytes // 4) * 4
    return pieces, offset


@pytest.mark.parametrize("mapped", [False, True], ids=["staged", "mapped"])
@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
def test_write_many_puts_every_piece_in_place(rng, mapped, half):
    """Odd sizes (1-byte elements, one element, empty), more pieces than fit one staging fill
    (a piece split across two), against one write a piece read back."""
    from mnn_vulkan import device
    from mnn_vulkan.device import _vulkan

    dev = device.choose()
    sizes = [1, 3, 0, 1023, 7, 257 * 1024, 5]
    dtypes = ["float32", "uint8", "float32", "float32", "uint8", "float32", "int32"]
    if not half:  # float32 bytes past one 32 MiB staging fill: a second submit, a piece split
        sizes += [9 * MIB, 1, 31]
        dtypes += ["float32", "float32", "uint8"]
    pieces, total = _pieces(rng, sizes, dtypes)
    halves = [half and a.dtype == np.float32 for _, a in pieces]
    # in a float16 arena a float32 piece takes half its bytes: lay those out again
    layout, offset = [], 64
    for (_, a), h in zip(pieces, halves):
        layout.append((offset, a, h))
        offset += -(-(a.nbytes // 2 if h else a.nbytes) // 4) * 4
    buf = _vulkan.Buffer(dev.context, offset + 64, mapped and dev.host_shared)
    submits = dev.context.copy_submits()
    buf.write_many(layout)
    if not buf.mapped:
        fills = -(-sum(a.nbytes // 2 if h else a.nbytes for _, a, h in layout) // (32 * MIB))
        assert dev.context.copy_submits() - submits <= fills + 1
    for off, a, h in layout:
        got = np.empty_like(a)
        buf.read(off, got, h)
        want = a.astype(np.float16).astype(np.float32) if h else a
        np.testing.assert_array_equal(got, want)


def test_session_weights_go_in_one_submit(rng):
    """A staged session: every weight right (the outputs match the mapped session bit for bit), the
    weights' upload one staging submit, and each run's copies as before. The segment's host tables
    (two convolutions' k-tables, Resize's coordinates) live in a buffer of their own, mapped where
    the device shares host memory and else uploaded in one more submit (test below)."""
    from mnn_vulkan import device

    graph = small_cnn(rng, batch=2)
    x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    mapped = mnn.Session(graph, backend="vulkan", fallback=False).run({"x": x})["probs"]
    ctx = device.choose().context
    before = ctx.copy_submits()
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
    arena = sess._current.arenas["vulkan"]
    assert not arena.buffer.mapped and arena.writes > 10  # the weights, counted one by one
    assert ctx.copy_submits() - before == (1 if device.choose().host_shared else 2)
    np.testing.assert_array_equal(sess.run({"x": x})["probs"], mapped)
    before = ctx.copy_submits()
    sess.run({"x": x})
    assert ctx.copy_submits() - before == 2  # the input in, the output out


def test_a_discrete_gpus_tables_go_in_one_submit(rng, monkeypatch):
    """lavapipe taken for a GPU whose memory the host does not share (NVIDIA's): the arena and the
    segment's tables both behind staging; the weights one submit, the three tables one more (they
    were a submit and a wait each), and the outputs those of the reference backend."""
    from mnn_vulkan import device

    monkeypatch.setattr(device.Device, "host_shared", property(lambda self: False))
    graph = small_cnn(rng, batch=2)
    x = rng.standard_normal((2, 3, 16, 16)).astype("float32")
    ctx = device.choose().context
    before = ctx.copy_submits()
    sess = mnn.Session(graph, backend="vulkan", fallback=False)
    assert not sess._current.arenas["vulkan"].buffer.mapped
    assert ctx.copy_submits() - before == 2
    want = mnn.Session(graph, backend="reference").run({"x": x})["probs"]
    np.testing.assert_allclose(sess.run({"x": x})["probs"], want, rtol=1e-4, atol=1e-5)


EARLY = """
import json, os, sys, threading, numpy as np, mnn_core as mnn
sys.path.insert(0, {tests!r})
from test_models import small_cnn
from mnn_vulkan import device
graph = small_cnn(np.random.default_rng(0))
sess = mnn.Session(graph, backend="vulkan", fallback=False)
dev = device.choose()
opened_at_session = dev._opener is not None or dev._context is not None
pid = os.fork()
if pid == 0:  # the child: the device was opened (or opening) in the parent, so Vulkan is refused
    print("CHILD " + json.dumps(device.unavailable_reason()), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype("float32")
got = sess.run({{"x": x}})["probs"]
ref = mnn.Session(graph, backend="reference").run({{"x": x}})["probs"]
print("PARENT " + json.dumps([opened_at_session, float(np.abs(got - ref).max()), threading.active_count()]))
"""


def test_the_device_opens_at_session_creation_and_a_fork_waits_for_it():
    """Session() starts opening the device in a thread; a fork right after waits for that thread,
    and the child reports Vulkan unavailable (the device belongs to the parent) instead of hanging;
    the parent's session is right and no opener thread is left behind."""
    script = EARLY.format(tests=os.path.dirname(__file__))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("CHILD", "PARENT")))
    assert "forked" in json.loads(lines["CHILD"])
    opened, err, threads = json.loads(lines["PARENT"])
    assert opened and err < 1e-5 and threads == 1


def test_a_second_open_early_does_not_wait_for_the_opening(monkeypatch):
    """The session's fuse asks for the device again while device_info's thread is still inside
    vkCreateDevice (holding the lock `context` takes): that call returns at once, so planning
    overlaps the opening; the first real use of the device then waits for it."""
    import threading
    import time

    from mnn_vulkan import device, pipeline_cache

    release = threading.Event()

    class SlowContext:  # stands in for _vulkan.Context: opening takes until `release`
        def __init__(self, index):
            release.wait(10)

    class NoCache:
        def __init__(self, dev):
            pass

        def load(self, context):
            pass

    monkeypatch.setattr(device, "_vulkan", type("Native", (), {"Context": SlowContext}))
    monkeypatch.setattr(pipeline_cache, "PipelineCache", NoCache)
    dev = device.Device(0, "stand-in", "discrete", {})
    dev.open_early()
    time.sleep(0.05)  # the thread is now inside SlowContext, holding the lock
    started = time.perf_counter()
    dev.open_early()
    waited = time.perf_counter() - started
    release.set()
    context = dev.context
    dev._opener.join(10)
    assert waited < 0.05, f"the second open_early waited {waited:.3f} s for the opening thread"
    assert isinstance(context, SlowContext) and not dev._opener.is_alive()


def test_a_device_local_arena_is_made_while_the_pipelines_are(rng, monkeypatch):
    """Device-local memory (staging: as on a discrete GPU) is allocated in a thread: a slow
    allocation overlaps the segment's pipelines, a fork waits for it, and the session is right."""
    import threading
    import time

    from mnn_vulkan import _vulkan, arena, device

    events, made_in = [], []

    def slow_buffer(context, size, mapped):
        events.append("allocating")
        made_in.append(threading.current_thread().name)
        time.sleep(0.3)
        buf = _vulkan.Buffer(context, size, mapped)
        events.append("allocated")
        return buf

    pipeline = device.Device.pipeline

    def noted_pipeline(self, *args):
        events.append("pipeline")
        return pipeline(self, *args)

    monkeypatch.setattr(arena, "_vulkan", type("Native", (), {"Buffer": staticmethod(slow_buffer)}))
    monkeypatch.setattr(device.Device, "pipeline", noted_pipeline)
    graph = small_cnn(rng, batch=3)  # a batch the pipelines of other tests do not cover
    x = rng.standard_normal((3, 3, 16, 16)).astype("float32")
    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.staging": True})
    assert made_in == ["mnn-vulkan-arena"]
    assert "pipeline" in events[events.index("allocating") : events.index("allocated")], events
    want = mnn.Session(graph, backend="reference").run({"x": x})["probs"]
    np.testing.assert_allclose(sess.run({"x": x})["probs"], want, rtol=1e-4, atol=1e-5)

    pending = arena.VulkanArena(1 << 20)
    pending.bind(device.choose(), staging=True)
    thread = pending._making[0]
    device._before_fork()  # what os.fork runs first: it waits for the allocation
    assert not thread.is_alive() and not device._WORKERS
    assert not pending.buffer.mapped
    too_big = arena.VulkanArena(1 << 50)  # the thread's error is raised where the buffer is wanted
    too_big.bind(device.choose(), staging=True)
    with pytest.raises(_vulkan.VulkanError, match="cannot create"):
        _ = too_big.buffer


INSTANCE = """
import json, os, sys, time
t0 = time.perf_counter()
from mnn_vulkan import device
imported = time.perf_counter() - t0
while not device._State.tried and time.perf_counter() - t0 < 60:  # nothing here asks for Vulkan
    time.sleep(0.01)
made_alone = device._State.tried
pid = os.fork()  # waits for the instance's thread, if any is still at work
if pid == 0:
    os.write(1, ("CHILD " + json.dumps(device.unavailable_reason()) + "\\n").encode())
    os._exit(0)
os.waitpid(pid, 0)
print("PARENT " + json.dumps([made_alone, device.unavailable_reason(), imported]))
"""


@pytest.mark.parametrize("early", ["", "0"])
def test_the_instance_is_made_in_a_thread_at_import(early):
    """Importing the package starts vkCreateInstance in a thread (it overlaps the model's import):
    the instance exists without anything asking for it, the import does not wait for it, and a
    fork after it leaves a child that still finds Vulkan (no device was opened). MNN_VULKAN_EARLY=0:
    made by the first question, as before."""
    env = dict(os.environ, MNN_VULKAN_EARLY=early)
    proc = subprocess.run(
        [sys.executable, "-c", INSTANCE],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if line.startswith(("CHILD", "PARENT")))
    made_alone, reason, _ = json.loads(lines["PARENT"])
    assert made_alone is (early != "0")
    assert reason == "" and json.loads(lines["CHILD"]) == ""

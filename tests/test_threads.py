"""One Session shared by threads: runs and plans are serialised per session (docs/RELIABILITY.md), so
8 threads at mixed input shapes get exactly what one thread gets, on every installed CPU and GPU
backend. Each backend runs 8 threads x RUNS_PER_THREAD[backend] runs, every one checked (34,000 in
all where every backend is installed: as many as each runs in a few seconds on a 2-core machine)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend.plugins import get_plugins

THREADS = 8
#: per thread (10,000 runs a backend; lavapipe's Vulkan, CI's, takes milliseconds a run)
RUNS_PER_THREAD = {"reference": 1250, "x86": 1250, "vulkan": 250, "opencl": 1250, "opengl": 250}
#: (batch, size) pairs the threads cycle through, each thread starting at another one
SHAPES = [(1, 6), (2, 6), (3, 6), (4, 6), (1, 8), (2, 8), (3, 8), (1, 5)]


def _model(width: int = 16, seed: int = 0) -> mnn.Graph:
    """conv3x3 -> relu -> conv3x3 -> add (residual) -> global average pool -> softmax, at any batch
    and size. At width 64 the second weight is 147 KB: mnn-x86 packs it, and a session made from a
    file releases it (weights.py)."""
    rng = np.random.default_rng(seed)
    b = mnn.GraphBuilder("threads")
    x = b.input("x", ("N", 16, "H", "W"))
    w1 = b.const(rng.standard_normal((width, 16, 3, 3)).astype("float32") * 0.2, "w1")
    b1 = b.const(rng.standard_normal(width).astype("float32") * 0.1, "b1")
    y = b.Relu(b.Conv(x, w1, b1, pads=[1, 1, 1, 1]))
    w2 = b.const(rng.standard_normal((width, width, 3, 3)).astype("float32") * 0.05, "w2")
    z = b.Add(b.Conv(y, w2, None, pads=[1, 1, 1, 1]), y)
    b.output(b.Softmax(b.Reshape(b.GlobalAveragePool(z), shape=[0, -1]), axis=-1), "y")
    return b.build()


def _feeds(seed: int = 1) -> dict[tuple, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return {s: [rng.standard_normal((s[0], 16, s[1], s[1])).astype("float32") for _ in range(3)] for s in SHAPES}


def _available(name: str) -> str:
    """Why backend `name` cannot run here, or ""."""
    backend = get_plugins().backends.get(name)
    if backend is None:
        return f"mnn-{name} is not installed"
    try:
        avail = backend.availability()
    except Exception as exc:  # a backend that cannot say is not available
        return f"{type(exc).__name__}: {exc}"
    return "" if avail else avail.reason


BACKENDS = [
    pytest.param("reference", {}, id="reference"),
    pytest.param(
        "x86",
        {"threads": 2, "batch_parallel": "off"},
        id="x86-2threads",
        marks=pytest.mark.skipif(bool(_available("x86")), reason=_available("x86") or "-"),
    ),
    pytest.param(
        "vulkan",
        {},
        id="vulkan",
        marks=pytest.mark.skipif(bool(_available("vulkan")), reason=_available("vulkan") or "-"),
    ),
    pytest.param(
        "opencl",
        {},
        id="opencl",
        marks=pytest.mark.skipif(bool(_available("opencl")), reason=_available("opencl") or "-"),
    ),
    pytest.param(
        "opengl",
        {},
        id="opengl",
        marks=pytest.mark.skipif(bool(_available("opengl")), reason=_available("opengl") or "-"),
    ),
]


def _hammer(sess: mnn.Session, feeds, expected, runs: int) -> list[str]:
    """THREADS threads, each running `runs` runs over the shapes from its own starting point, all
    released at once; returns what went wrong."""
    start = threading.Barrier(THREADS)
    wrong: list[str] = []

    def work(t: int) -> None:
        start.wait()
        try:
            for i in range(runs):
                shape = SHAPES[(t + i) % len(SHAPES)]
                k = (t * 7 + i) % 3
                got = sess.run({"x": feeds[shape][k]})["y"]
                if not np.allclose(got, expected[shape][k], rtol=1e-4, atol=1e-6):
                    wrong.append(
                        f"thread {t} run {i} shape {shape}: off by {np.abs(got - expected[shape][k]).max():.3g}"
                    )
        except Exception as exc:  # an error is a failure of the test, not of the thread
            wrong.append(f"thread {t}: {type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return wrong


@pytest.mark.parametrize("backend, options", BACKENDS)
def test_shared_session_matches_single_thread(backend, options):
    graph, feeds = _model(), _feeds()
    single = mnn.Session(graph, backend=backend, **options)
    expected = {s: [single.run({"x": x})["y"] for x in xs] for s, xs in feeds.items()}
    # a fresh session: its first plans, at eight shapes, are made by eight threads at once
    shared = mnn.Session(graph, backend=backend, **options)
    runs = RUNS_PER_THREAD[backend]
    wrong = _hammer(shared, feeds, expected, runs)
    assert not wrong, f"{len(wrong)} of {THREADS * runs} runs wrong: {wrong[:5]}"
    # and the plans those threads made stay right for one thread afterwards
    for shape, xs in feeds.items():
        np.testing.assert_allclose(shared.run({"x": xs[0]})["y"], expected[shape][0], rtol=1e-4, atol=1e-6)


def test_released_weights_come_back_once_per_new_shape(tmp_path):
    """mnn-x86 packs the 147 KB conv weight and the session frees it (weights.py); threads that plan
    new shapes at once restore it without racing each other's releases (they built plans from the
    zero placeholders, and those plans were kept)."""
    if _available("x86"):
        pytest.skip(_available("x86"))
    graph, feeds, path = _model(width=64), _feeds(), tmp_path / "wide.mnn"
    mnn.save(graph, path)
    single = mnn.Session(graph, backend="x86", batch_parallel="off")
    expected = {s: [single.run({"x": x})["y"] for x in xs] for s, xs in feeds.items()}
    for _ in range(4):
        sess = mnn.Session(path, backend="x86", batch_parallel="off")
        assert not _hammer(sess, feeds, expected, 2 * len(SHAPES))
        assert len(sess._released) > 0  # the weight was released (and restored for each new shape)
        for shape, xs in feeds.items():  # the plans kept are right for one thread too
            np.testing.assert_allclose(sess.run({"x": xs[1]})["y"], expected[shape][1], rtol=1e-4, atol=1e-6)


def test_plan_and_memory_read_while_others_run():
    graph, feeds = _model(), _feeds()
    sess = mnn.Session(graph, backend="reference")
    stop = threading.Event()
    seen: list = []

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append((len(sess.plan), sum(r.arena_bytes for r in sess.memory.values())))
            except mnn.MnnError:  # no plan yet: the model's inputs are dynamic
                pass

    t = threading.Thread(target=reader)
    t.start()
    try:
        for shape in SHAPES * 3:
            sess.run({"x": feeds[shape][0]})
    finally:
        stop.set()
        t.join()
    assert all(n > 0 for n, _ in seen)

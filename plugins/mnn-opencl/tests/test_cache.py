"""The on-disk caches: program binaries (a second session skips the compiler,
a damaged file is rebuilt) and work-group tuning results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn

pytestmark = needs_opencl

START_SCRIPT = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    import numpy as np, mnn_core as mnn
    from mnn_opencl import runtime
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 4, 8, 8))
    w = b.const(np.ones((4, 4, 3, 3), "float32"))
    b.output(b.Relu(b.Conv(x, w, None, pads=[1, 1, 1, 1])), "y")
    t1 = time.perf_counter()
    sess = mnn.Session(b.build(), backend="opencl", fallback=False)
    y = sess.run({"x": np.ones((1, 4, 8, 8), "float32")})["y"]
    t2 = time.perf_counter()
    rt = runtime.get_runtime(runtime.select_device())
    print(json.dumps({"builds": rt.builds, "session_s": t2 - t1, "center": float(y[0, 0, 4, 4])}))
""")


def _start(cache_dir, **env):
    full = dict(os.environ, MNN_OPENCL_CACHE_DIR=str(cache_dir), **env)
    out = subprocess.run([sys.executable, "-c", START_SCRIPT], env=full, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_session_loads_the_binary(tmp_path):
    # The drivers' own caches would hide the compile in the cold start: PoCL's kernel cache
    # goes off; NVIDIA's compute cache (~/.nv/ComputeCache, warm once any earlier test built
    # the program) starts empty in tmp_path instead. It cannot go off: NVIDIA's program
    # binary is PTX, which the driver still compiles to machine code when it loads it, so
    # with its cache off a warm start saves only the front end (1.2-1.4x on the H200).
    env = {"POCL_KERNEL_CACHE": "0", "CUDA_CACHE_PATH": str(tmp_path / "nv-cache")}
    cold = _start(tmp_path, **env)
    files = list(tmp_path.glob("*.clbin"))
    assert [b["how"] for b in cold["builds"]] == ["source"] and len(files) == 1
    warm = _start(tmp_path, **env)
    assert [b["how"] for b in warm["builds"]] == ["binary"]
    assert warm["center"] == cold["center"] == 36.0
    assert warm["builds"][0]["seconds"] < cold["builds"][0]["seconds"] / 5, (cold, warm)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A fresh cache folder, and programs forgotten before and after (others rebuild theirs)."""
    from mnn_opencl import runtime

    monkeypatch.setenv("MNN_OPENCL_CACHE_DIR", str(tmp_path))
    runtime.forget_programs()
    yield tmp_path
    runtime.forget_programs()


def _load():
    from mnn_opencl import runtime

    rt = runtime.get_runtime(runtime.select_device())
    rt.programs.clear()
    rt.program("float32")
    return rt.builds[-1]


def test_damaged_cache_file_is_rebuilt(private_cache):
    first = _load()
    assert first["how"] == "source"
    path = private_cache / os.path.basename(first["path"])
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # truncated
    assert _load()["how"] == "source"
    assert path.read_bytes() == good  # re-cached
    assert _load()["how"] == "binary"


def test_binary_the_driver_refuses_is_rebuilt(private_cache):
    from mnn_opencl.program_cache import _write_atomically

    first = _load()
    path = private_cache / os.path.basename(first["path"])
    _write_atomically(path, b"not a program binary" * 50)  # a valid header around garbage
    assert _load()["how"] == "source"
    assert _load()["how"] == "binary"


def test_cache_can_be_turned_off(private_cache, monkeypatch):
    monkeypatch.setenv("MNN_OPENCL_CACHE", "0")
    assert _load()["how"] == "source"
    assert not list(private_cache.glob("*.clbin"))


def _tiny_graph():
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 8, 9, 9))
    w = b.const(np.random.default_rng(0).standard_normal((8, 8, 3, 3)).astype("float32"))
    b.output(b.Add(b.Conv(x, w, None, pads=[1, 1, 1, 1]), x), "y")
    return b.build()


def test_tuning_is_measured_once_and_cached(private_cache):
    backend = opencl_backend()
    graph = _tiny_graph()
    x = np.random.default_rng(1).standard_normal((1, 8, 9, 9)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    for tuned in (True, False):
        sess = mnn.Session(graph, backend="opencl", fallback=False, options={"opencl.tuning": "fast"})
        np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=1e-5)
        assert (backend.segments[-1]["tuned"] > 0) == tuned
    files = list(private_cache.glob("tuning-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())


def test_bad_tuning_mode_is_an_error():
    with pytest.raises(mnn.MnnError, match="opencl.tuning must be one of none, fast, wide"):
        mnn.Session(_tiny_graph(), backend="opencl", options={"opencl.tuning": "max"})

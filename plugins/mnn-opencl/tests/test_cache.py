"""The on-disk caches: program binaries (a second session skips the compiler,
a damaged file is rebuilt) and work-group tuning results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn
from mnn_core.testing.deadline import fail_after

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
    with pytest.warns(UserWarning, match="HMAC does not match"):
        assert _load()["how"] == "source"
    assert path.read_bytes() == good  # re-cached
    assert _load()["how"] == "binary"


def _entry(folder):
    """A fresh cache entry: (its path, its key, the folder's secret, its bytes)."""
    from mnn_opencl.program_cache import MAGIC, SECRET_NAME

    first = _load()
    assert first["how"] == "source"
    path = folder / os.path.basename(first["path"])
    data = path.read_bytes()
    return path, data[len(MAGIC) : len(MAGIC) + 32], (folder / SECRET_NAME).read_bytes(), data


def test_binary_the_driver_refuses_is_rebuilt(private_cache):
    from mnn_opencl.program_cache import pack

    path, key, secret, _ = _entry(private_cache)
    path.write_bytes(pack(key, secret, b"not a program binary" * 50))  # a valid header around garbage
    with pytest.warns(UserWarning, match="refused by the driver"):
        assert _load()["how"] == "source"
    assert _load()["how"] == "binary"


def _foreign_binary(options=""):
    """A real binary of this device, built from other kernel source."""
    from mnn_opencl import runtime

    rt = runtime.get_runtime(runtime.select_device())
    program = rt.context.build_source("__kernel void other(__global float *x) { x[0] = 42.0f; }", options)
    return program.binary()


@pytest.mark.parametrize("forgery", ["right key, no secret", "other source's key", "old format"])
def test_foreign_binary_at_the_predictable_name_is_rebuilt(private_cache, forgery):
    import hashlib
    import hmac

    from mnn_opencl.program_cache import MAGIC, pack

    path, key, secret, good = _entry(private_cache)
    foreign = _foreign_binary()
    if forgery == "right key, no secret":  # one who knows the format and the name, not the folder's secret
        data = pack(key, os.urandom(32), foreign)
        why = "HMAC does not match"
    elif forgery == "other source's key":  # a genuine entry of other source, renamed
        data = pack(hashlib.sha256(b"other").digest(), secret, foreign)
        why = "key differs"
    else:  # version 1: a plain SHA-256 of the payload proved integrity, not origin
        data = b"MNNCLBIN1\n" + hashlib.sha256(foreign).digest() + foreign
        why = "not a cache file"
    assert not hmac.compare_digest(data, good)
    path.write_bytes(data)
    with pytest.warns(UserWarning, match=why):
        assert _load()["how"] == "source"
    assert path.read_bytes() == good and path.read_bytes().startswith(MAGIC)
    assert _load()["how"] == "binary"


@pytest.mark.parametrize("digest", ["plain sha256", "old format"])
def test_truncated_binary_with_a_valid_digest_never_reaches_the_driver(private_cache, digest):
    import hashlib

    from mnn_opencl.program_cache import _HEAD, MAGIC

    path, key, _, good = _entry(private_cache)
    cut = good[_HEAD:][: (len(good) - _HEAD) // 2]
    if digest == "plain sha256":
        path.write_bytes(MAGIC + key + hashlib.sha256(key + cut).digest() + cut)
    else:
        path.write_bytes(b"MNNCLBIN1\n" + hashlib.sha256(cut).digest() + cut)
    with pytest.warns(UserWarning, match="HMAC|not a cache file"):
        assert _load()["how"] == "source"  # (handing it to PoCL would crash the process)
    assert path.read_bytes() == good


@pytest.fixture
def alarm():
    """Fail after 30 s instead of hanging (a FIFO opened for reading blocks until a writer comes)."""
    with fail_after(30, "the program cache blocked on a FIFO or a device"):
        yield


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero", "symlink to a good binary", "folder"])
def test_cache_path_that_is_not_a_regular_file_is_never_read(private_cache, kind, alarm):
    path, _, _, good = _entry(private_cache)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink to /dev/zero":
        os.symlink("/dev/zero", path)
    elif kind == "symlink to a good binary":
        (private_cache / "elsewhere").write_bytes(good)
        os.symlink(private_cache / "elsewhere", path)
    else:
        path.mkdir()
    with pytest.warns(UserWarning, match="not a regular file"):
        assert _load()["how"] == "source"
    if kind != "folder":  # (a folder at the name stays: the rebuilt binary is not cached)
        assert path.is_file() and not path.is_symlink() and path.read_bytes() == good
        assert _load()["how"] == "binary"


def test_entry_writable_by_others_is_rebuilt(private_cache):
    path, _, _, _ = _entry(private_cache)
    path.chmod(0o666)
    with pytest.warns(UserWarning, match="writable by group or others"):
        assert _load()["how"] == "source"
    assert _load()["how"] == "binary"


def test_damaged_secret_is_replaced_and_its_binaries_rebuilt(private_cache):
    from mnn_opencl.program_cache import SECRET_NAME

    _entry(private_cache)
    (private_cache / SECRET_NAME).write_bytes(b"short")
    with pytest.warns(UserWarning, match="HMAC does not match"):
        assert _load()["how"] == "source"
    assert len((private_cache / SECRET_NAME).read_bytes()) == 32
    assert _load()["how"] == "binary"


@pytest.mark.parametrize("owner", ["group-writable", "world-writable", "another user"])
def test_folder_others_can_write_is_not_used(tmp_path, monkeypatch, owner):
    from mnn_opencl import runtime

    folder = tmp_path / "shared"
    folder.mkdir()
    if owner == "another user":
        if os.getuid() != 0:
            pytest.skip("making a folder of another user needs root")
        os.chown(folder, 65534, 65534)
        folder.chmod(0o755)
    else:
        folder.chmod(0o770 if owner == "group-writable" else 0o777)
    (folder / "planted.clbin").write_bytes(b"x")
    monkeypatch.setenv("MNN_OPENCL_CACHE_DIR", str(folder))
    runtime.forget_programs()
    try:
        with pytest.warns(UserWarning, match="not using it"):
            assert _load()["how"] == "source"
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # reported once
            assert _load()["how"] == "source"
    finally:
        runtime.forget_programs()
    assert sorted(p.name for p in folder.iterdir()) == ["planted.clbin"]  # nothing read or written there


def test_a_new_cache_folder_is_private(tmp_path, monkeypatch):
    from mnn_opencl import runtime

    folder = tmp_path / "a" / "cache"
    monkeypatch.setenv("MNN_OPENCL_CACHE_DIR", str(folder))
    runtime.forget_programs()
    try:
        assert _load()["how"] == "source"
    finally:
        runtime.forget_programs()
    assert folder.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o077 == 0 for p in folder.iterdir())


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


@pytest.mark.parametrize("damage", ["values", "not json", "fifo"])
def test_damaged_tuning_file_is_measured_again(private_cache, damage, alarm):
    from mnn_opencl import tuning

    backend = opencl_backend()
    graph = _tiny_graph()
    x = np.random.default_rng(1).standard_normal((1, 8, 9, 9)).astype("float32")
    want = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    options = {"opencl.tuning": "fast"}
    mnn.Session(graph, backend="opencl", fallback=False, options=options).run({"x": x})
    path = next(private_cache.glob("tuning-*.json"))
    if damage == "values":  # work-group shapes no device takes
        table = json.loads(path.read_text())
        path.write_text(json.dumps({k: [0, 1 << 30, -1][: len(v)] for k, v in table.items()}))
    elif damage == "not json":
        path.write_bytes(b"\xff" * 100)
    else:
        path.unlink()
        os.mkfifo(path)
    tuning._caches.clear()
    sess = mnn.Session(graph, backend="opencl", fallback=False, options=options)
    np.testing.assert_allclose(sess.run({"x": x})["y"], want, rtol=1e-4, atol=1e-5)
    assert backend.segments[-1]["tuned"] > 0


def test_bad_tuning_mode_is_an_error():
    with pytest.raises(mnn.MnnError, match="opencl.tuning must be one of none, fast, wide"):
        mnn.Session(_tiny_graph(), backend="opencl", options={"opencl.tuning": "max"})

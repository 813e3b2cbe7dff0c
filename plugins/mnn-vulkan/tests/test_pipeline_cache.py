"""The pipeline cache on disk: saved after new pipelines, loaded by the next context, and a
truncated, edited, foreign or misplaced file ignored with a warning, results unchanged."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from vulkan_testing import needs_vulkan

pytestmark = needs_vulkan


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MNN_VULKAN_CACHE_DIR", str(tmp_path / "vk"))
    return tmp_path / "vk"


def _fresh():
    """A device's new context with the cache of $MNN_VULKAN_CACHE_DIR (not the process's own)."""
    from mnn_vulkan import device
    from mnn_vulkan.device import _vulkan
    from mnn_vulkan.pipeline_cache import PipelineCache

    dev = device.choose()
    return dev, _vulkan.Context(dev.index), PipelineCache(dev)


def _make_pipeline(context, cache=None, spec=(64, 1, 1)):
    """A pipeline made in `context`, noted in `cache` as Device.pipeline notes it."""
    from mnn_vulkan.device import _vulkan
    from mnn_vulkan.shaders import spirv

    if cache is not None:
        cache.note(spirv("unary"), 2, spec)
    return _vulkan.Pipeline(context, spirv("unary"), 2, spec)


def _payload(path):
    """The driver's cache data of a file (after the signed header and the pipeline list)."""
    from mnn_vulkan.pipeline_cache import MAGIC, unframe

    data = path.read_bytes()
    return unframe(data[len(MAGIC) + 64 :])[1]


def _repack(cache, data, digests=None):
    """A well-signed file around other driver data (or another pipeline list)."""
    from mnn_vulkan.pipeline_cache import MAGIC, frame, unframe

    from mnn_core.backend.kit import disk_cache

    if digests is None:
        digests = unframe(cache.path.read_bytes()[len(MAGIC) + 64 :])[0]
    cache.path.write_bytes(disk_cache.pack(MAGIC, cache.key, cache.secret, frame(digests, data)))


def test_a_second_context_starts_from_the_saved_cache(cache_dir):
    dev, ctx, cache = _fresh()
    assert not cache.load(ctx)  # nothing saved yet
    keep = _make_pipeline(ctx, cache)
    cache.save(ctx)
    assert cache.path.is_file() and (cache.path.stat().st_mode & 0o077) == 0
    header = _payload(cache.path)[:16]
    assert struct.unpack("<4I", header) == (32, 1, dev.props["vendor_id"], dev.props["device_id"])

    dev, ctx2, cache2 = _fresh()
    assert cache2.load(ctx2)
    stamp = cache2.path.stat().st_mtime_ns
    cache2.save(ctx2)  # no pipeline made since the load: the file is not rewritten
    assert cache2.path.stat().st_mtime_ns == stamp
    assert ctx2.pipeline_stats()[0] == 0 and ctx.pipeline_stats()[0] == 1
    again = _make_pipeline(ctx2, cache2)  # one the file lists: still not rewritten
    cache2.save(ctx2)
    assert cache2.path.stat().st_mtime_ns == stamp and cache2.writes == 0
    other = _make_pipeline(ctx2, cache2, spec=(32, 1, 1))  # one it does not: rewritten, listing both
    cache2.save(ctx2)
    assert cache2.writes == 1 and len(cache2.listed) == 2
    dev, ctx3, cache3 = _fresh()
    assert cache3.load(ctx3) and cache3.listed == cache2.listed
    del keep, again, other


def _saved(cache_dir):
    dev, ctx, cache = _fresh()
    keep = _make_pipeline(ctx, cache)
    cache.save(ctx)
    del keep
    return cache


def _foreign_header(cache):
    """A well-signed file whose Vulkan header names another device: only the C check stops it."""
    payload = bytearray(_payload(cache.path))
    payload[8:12] = struct.pack("<I", 0xDEAD)
    _repack(cache, bytes(payload))


def _other_uuid(cache):
    payload = bytearray(_payload(cache.path))
    payload[16:32] = bytes(16)
    _repack(cache, bytes(payload))


def _list_overrun(cache):
    """A well-signed file whose pipeline count runs past its end."""
    from mnn_vulkan.pipeline_cache import MAGIC

    from mnn_core.backend.kit import disk_cache

    payload = struct.pack("<I", 1 << 20) + bytes(64)
    cache.path.write_bytes(disk_cache.pack(MAGIC, cache.key, cache.secret, payload))


def _old_format(cache):
    """A file of the format before the pipeline list (magic MNNVKPC1)."""
    from mnn_core.backend.kit import disk_cache

    cache.path.write_bytes(disk_cache.pack(b"MNNVKPC1\n", cache.key, cache.secret, _payload(cache.path)))


BAD = {
    "truncated": lambda c: c.path.write_bytes(c.path.read_bytes()[:40]),
    "garbage": lambda c: c.path.write_bytes(os.urandom(4096)),
    "edited": lambda c: c.path.write_bytes(c.path.read_bytes()[:-1] + bytes([c.path.read_bytes()[-1] ^ 1])),
    "foreign vendor": _foreign_header,
    "foreign driver uuid": _other_uuid,
    "pipeline list overrun": _list_overrun,
    "previous format": _old_format,
    "truncated driver data": lambda c: _repack(c, _payload(c.path)[:20]),
    "symlink": lambda c: (c.path.unlink(), c.path.symlink_to("/dev/zero")),
}


@pytest.mark.parametrize("damage", sorted(BAD))
def test_a_bad_cache_file_is_ignored_with_a_warning(cache_dir, damage):
    cache = _saved(cache_dir)
    BAD[damage](cache)
    dev, ctx, cache2 = _fresh()
    with pytest.warns(UserWarning, match="mnn-vulkan: the cache file"):
        assert not cache2.load(ctx)
    assert not cache2.path.exists()  # removed, so the next save writes a good one
    keep = _make_pipeline(ctx, cache2)  # the context still builds pipelines
    cache2.save(ctx)
    assert cache2.path.is_file()
    del keep


RUN = """
import json, sys, numpy as np, mnn_core as mnn
sys.path.insert(0, {tests!r})
from test_models import small_cnn
graph = small_cnn(np.random.default_rng(0))
x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype("float32")
got = mnn.Session(graph, backend="vulkan", fallback=False).run({{"x": x}})["probs"]
ref = mnn.Session(graph, backend="reference").run({{"x": x}})["probs"]
from mnn_vulkan import device
dev = device.choose()
print(json.dumps([float(np.abs(got - ref).max()), dev.context.pipeline_stats()[0], dev.disk_cache.writes]))
"""


def test_sessions_stay_correct_over_a_corrupt_cache(cache_dir):
    """A whole session in a fresh process over a garbage file: a warning, the right outputs,
    and a good file left for the next start."""
    from mnn_vulkan import device
    from mnn_vulkan.pipeline_cache import cache_path

    path = cache_path(device.choose())
    path.write_bytes(os.urandom(1000))
    path.chmod(0o600)
    env = dict(os.environ, MNN_VULKAN_CACHE_DIR=str(cache_dir))
    script = RUN.format(tests=os.path.dirname(__file__))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "mnn-vulkan: the cache file" in proc.stderr and "ignored" in proc.stderr
    err, pipelines, writes = json.loads(proc.stdout.strip().splitlines()[-1])
    assert err < 1e-5 and pipelines > 0 and writes == 1
    assert path.read_bytes()[:9] == b"MNNVKPC2\n"
    assert np.isfinite(err)


def test_a_warm_start_leaves_the_file_alone(cache_dir):
    """Two fresh processes on one cache folder: the first writes the file, the second (same model,
    every pipeline listed) neither rewrites nor replaces it, and computes the same."""
    from mnn_vulkan import device
    from mnn_vulkan.pipeline_cache import cache_path

    path = cache_path(device.choose())
    env = dict(os.environ, MNN_VULKAN_CACHE_DIR=str(cache_dir))
    script = RUN.format(tests=os.path.dirname(__file__))
    results = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert "mnn-vulkan: the cache file" not in proc.stderr
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        if len(results) == 1:
            stat = path.stat()
    (err1, made1, writes1), (err2, made2, writes2) = results
    assert writes1 == 1 and writes2 == 0 and made2 == made1 > 0
    assert err1 < 1e-5 and err2 < 1e-5
    now = path.stat()
    assert (now.st_ino, now.st_mtime_ns, now.st_size) == (stat.st_ino, stat.st_mtime_ns, stat.st_size)

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


def _make_pipeline(context):
    from mnn_vulkan.device import _vulkan
    from mnn_vulkan.shaders import spirv

    return _vulkan.Pipeline(context, spirv("unary"), 2, (64, 1, 1))


def _payload(path):
    from mnn_vulkan.pipeline_cache import MAGIC

    data = path.read_bytes()
    return data[len(MAGIC) + 64 :]


def test_a_second_context_starts_from_the_saved_cache(cache_dir):
    dev, ctx, cache = _fresh()
    assert not cache.load(ctx)  # nothing saved yet
    keep = _make_pipeline(ctx)
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
    del keep


def _saved(cache_dir):
    dev, ctx, cache = _fresh()
    keep = _make_pipeline(ctx)
    cache.save(ctx)
    del keep
    return cache


def _foreign_header(cache):
    """A well-signed file whose Vulkan header names another device: only the C check stops it."""
    from mnn_vulkan.pipeline_cache import MAGIC

    from mnn_core.backend.kit import disk_cache

    payload = bytearray(_payload(cache.path))
    payload[8:12] = struct.pack("<I", 0xDEAD)
    cache.path.write_bytes(disk_cache.pack(MAGIC, cache.key, cache.secret, bytes(payload)))


def _other_uuid(cache):
    from mnn_vulkan.pipeline_cache import MAGIC

    from mnn_core.backend.kit import disk_cache

    payload = bytearray(_payload(cache.path))
    payload[16:32] = bytes(16)
    cache.path.write_bytes(disk_cache.pack(MAGIC, cache.key, cache.secret, bytes(payload)))


BAD = {
    "truncated": lambda c: c.path.write_bytes(c.path.read_bytes()[:40]),
    "garbage": lambda c: c.path.write_bytes(os.urandom(4096)),
    "edited": lambda c: c.path.write_bytes(c.path.read_bytes()[:-1] + bytes([c.path.read_bytes()[-1] ^ 1])),
    "foreign vendor": _foreign_header,
    "foreign driver uuid": _other_uuid,
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
    keep = _make_pipeline(ctx)  # the context still builds pipelines
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
print(json.dumps([float(np.abs(got - ref).max()), device.choose().context.pipeline_stats()[0]]))
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
    err, pipelines = json.loads(proc.stdout.strip().splitlines()[-1])
    assert err < 1e-5 and pipelines > 0
    assert path.read_bytes()[:9] == b"MNNVKPC1\n"
    assert np.isfinite(err)

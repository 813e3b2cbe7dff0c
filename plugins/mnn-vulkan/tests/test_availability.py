"""Why Vulkan is unavailable is reported, not raised; device choice is overridable.

The reasons are checked in fresh interpreters (the loader opens once per
process) with the loader or the drivers pointed at nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from vulkan_testing import needs_vulkan

PROBE = (
    "import json; from mnn_core.plugins import get_plugins; b = get_plugins().backends['vulkan']; "
    "a = b.availability(); print(json.dumps([a.available, a.reason, len(b.kernels())]))"
)


def _probe(drop=(), **env):
    full = dict(os.environ, MNN_LOAD_PLUGINS="vulkan", **env)
    for name in drop:
        full.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=full, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_no_loader_is_reported():
    available, reason, n_kernels = _probe(MNN_VULKAN_LIBRARY="/nonexistent/libvulkan.so.1")
    assert not available
    assert "no Vulkan loader" in reason and "/nonexistent/libvulkan.so.1" in reason and "MNN_VULKAN_LIBRARY" in reason
    assert n_kernels > 0  # capabilities are data even where the device is missing


def test_mnn_backends_lists_the_reason():
    env = dict(os.environ, MNN_LOAD_PLUGINS="vulkan", MNN_VULKAN_LIBRARY="/nonexistent/libvulkan.so.1")
    proc = subprocess.run(
        [sys.executable, "-m", "mnn_core", "backends"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("vulkan"))
    assert "unavailable: no Vulkan loader" in line


def test_no_driver_is_reported(tmp_path):
    missing = str(tmp_path / "no_icd.json")
    available, reason, _ = _probe(drop=("MNN_VULKAN_LIBRARY",), VK_DRIVER_FILES=missing, VK_ICD_FILENAMES=missing)
    if available:
        pytest.skip("this loader ignores VK_DRIVER_FILES / VK_ICD_FILENAMES")
    if reason.startswith("no Vulkan loader"):
        pytest.skip("no Vulkan loader here to point at no driver")
    assert "no Vulkan device" in reason or "instance creation failed" in reason


@needs_vulkan
def test_bad_device_choice_names_the_devices():
    available, reason, _ = _probe(MNN_VULKAN_DEVICE="no-such-gpu")
    assert not available
    assert "MNN_VULKAN_DEVICE='no-such-gpu' matches no usable Vulkan device" in reason and "0: " in reason


@needs_vulkan
def test_default_order_prefers_discrete_then_integrated_then_cpu():
    from mnn_vulkan import device

    chosen = device.choose(None)
    ranks = [device.TYPE_RANK[d.type] for d in device.devices()]
    assert device.TYPE_RANK[chosen.type] == min(ranks)


@needs_vulkan
def test_session_option_picks_the_device(rng):
    import numpy as np
    from mnn_vulkan import device

    import mnn_core as mnn
    from mnn_core.errors import BackendError

    first = device.devices()[0]
    b = mnn.GraphBuilder()
    b.output(b.Relu(b.input("x", (4, 4))), "y")
    graph = b.build()
    x = rng.standard_normal((4, 4)).astype("float32")
    for choice in (str(first.index), first.name[:5]):
        sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.device": choice})
        np.testing.assert_array_equal(sess.run({"x": x})["y"], np.maximum(x, 0))
    with pytest.raises(BackendError, match="vulkan.device='nope' matches no usable Vulkan device"):
        mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.device": "nope"})

"""Where OpenGL compute cannot run, the plugin says why and nothing crashes: each
case runs in a fresh process (EGL is opened once per process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from opengl_testing import needs_opengl

import mnn_core as mnn
from mnn_core.errors import BackendError


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


REASON = "from mnn_opengl import device; print('REASON:', device.unavailable_reason())"


def test_no_egl_library_is_a_reason_not_a_crash():
    proc = _run(REASON, MNN_OPENGL_LIBRARY="/nonexistent/libEGL.so.1")
    assert proc.returncode == 0, proc.stderr
    assert "no EGL library" in proc.stdout and "/nonexistent/libEGL.so.1" in proc.stdout
    assert "MNN_OPENGL_LIBRARY" in proc.stdout  # says what to do


def test_a_library_without_egl_is_a_reason():
    proc = _run(REASON, MNN_OPENGL_LIBRARY="libm.so.6")
    assert proc.returncode == 0, proc.stderr
    assert "no eglGetProcAddress" in proc.stdout


def test_no_egl_driver_reports_no_display():
    """glvnd's libEGL with no vendor library: no platform gives a display."""
    proc = _run(REASON, __EGL_VENDOR_LIBRARY_FILENAMES="/nonexistent/vendor.json", EGL_LOG_LEVEL="fatal")
    assert proc.returncode == 0, proc.stderr
    assert "no headless EGL display" in proc.stdout or "no EGL library" in proc.stdout, proc.stdout


def test_mnn_backends_lists_the_reason():
    proc = subprocess.run(
        [sys.executable, "-m", "mnn_core.cli", "backends"],
        capture_output=True,
        text=True,
        env=dict(os.environ, MNN_OPENGL_LIBRARY="/nonexistent/libEGL.so.1"),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("opengl"))
    assert "unavailable: no EGL library" in line
    assert any(x.startswith("reference") and "available" in x for x in proc.stdout.splitlines())


def test_session_on_unavailable_opengl_is_a_clear_error():
    code = (
        "import numpy as np, mnn_core as mnn\n"
        "b = mnn.GraphBuilder('g'); x = b.input('x', (2, 3)); b.output(b.Relu(x), 'y')\n"
        "try:\n    mnn.Session(b.build(), backend='opengl', fallback=False)\n"
        "except Exception as e:\n    print('ERROR:', type(e).__name__, e)\n"
    )
    proc = _run(code, MNN_OPENGL_LIBRARY="/nonexistent/libEGL.so.1")
    assert proc.returncode == 0, proc.stderr
    assert "ERROR:" in proc.stdout and "opengl" in proc.stdout.lower()


def test_bad_platform_choice_names_the_choices():
    proc = _run(REASON, MNN_OPENGL_PLATFORM="wayland")
    assert "'wayland' is not one of auto, surfaceless, device, default" in proc.stdout


@needs_opengl
@pytest.mark.parametrize("api, gles", [("gles", True), ("gl", False)])
def test_api_choice_by_environment(api, gles):
    proc = _run(
        "from mnn_opengl import device; d = device.open_device(); print('GLES:', d.props['gles'])", MNN_OPENGL_API=api
    )
    assert proc.returncode == 0, proc.stderr
    assert f"GLES: {gles}" in proc.stdout


@needs_opengl
def test_bad_session_option_is_a_clear_error():
    b = mnn.GraphBuilder("g")
    b.output(b.Relu(b.input("x", (2, 3))), "y")
    with pytest.raises(BackendError, match="opengl.api='vulkan' is not one of"):
        mnn.Session(b.build(), backend="opengl", fallback=False, options={"opengl.api": "vulkan"})


@needs_opengl
def test_devices_describe_the_context():
    from mnn_core.plugins import get_plugins

    info = get_plugins().backends["opengl"].devices()[0]
    assert "OpenGL" in info.name and info.extra["max_ssbo_bytes"] >= 1 << 27  # GLES 3.1 guarantees 2^27


@needs_opengl
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_forked_child_reports_unavailable_instead_of_hanging():
    code = (
        "import os\n"
        "from mnn_opengl import device\n"
        "device.open_device()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    print('CHILD:', device.unavailable_reason(), flush=True)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print('PARENT:', repr(device.unavailable_reason()))\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr
    assert "CHILD: an OpenGL context was opened before this process was forked" in proc.stdout
    assert "PARENT: ''" in proc.stdout


@pytest.mark.parametrize("platform", ["surfaceless", "device", "default"])
def test_each_platform_opens_or_says_why(platform):
    """Pinned to one EGL platform, the plugin opens it or names why not (without X, the default
    display fails on Mesa); never a crash."""
    proc = _run(REASON + "; print('OPENED' if not device.unavailable_reason() else '')", MNN_OPENGL_PLATFORM=platform)
    assert proc.returncode == 0, proc.stderr
    assert "OPENED" in proc.stdout or f"no headless EGL display ({platform}" in proc.stdout, proc.stdout

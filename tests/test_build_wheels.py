"""tools/build_wheels.py: the core's wheel builds from a clean copy of its sources and ships no
C or Cython sources; the check names what a wheel should not hold."""

from __future__ import annotations

import importlib.util
import runpy
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_wheels", ROOT / "tools" / "build_wheels.py")
build_wheels = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_wheels)


def test_check_names_sources_and_the_largest_extension(tmp_path):
    wheel = tmp_path / "x-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("pkg/_ext.c", "int x;")
        z.writestr("pkg/_ext.pyx", "")
        z.writestr("pkg/_ext.cpython-311-x86_64-linux-gnu.so", b"\0" * 1000)
        z.writestr("pkg/mod.py", "")
        z.writestr("mnn_core/include/mnn_core/abi.h", "")  # the ABI header is meant to ship
        z.writestr("mnn_core/backend/execution.pxi", "")  # ... and the Cython include plugins build with
    sources, largest = build_wheels.check(wheel)
    assert sources == ["pkg/_ext.c", "pkg/_ext.pyx"] and largest == 1000


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
def test_core_wheel_builds_without_sources(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_wheels.py"), "core", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    (wheel,) = tmp_path.glob("mnn_core-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.endswith((".c", ".pyx"))]
    assert "mnn_core/include/mnn_core/abi.h" in names and any(n.endswith(".so") for n in names)
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "examples/"))]


def test_unknown_package_is_refused():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_wheels.py"), "cuda"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "unknown package(s) cuda" in out.stderr


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
@pytest.mark.parametrize("plugin", ["x86", "arm", "vulkan", "opencl", "opengl", "metal"])
def test_a_staged_plugin_finds_the_core_abi_without_mnn_core_installed(tmp_path, plugin):
    # a clean build environment cannot import mnn_core: the plugin's setup.py then runs the staged
    # tree's mnn_core/backend/build.py, which must find the ABI header and Cython declarations there
    source = build_wheels.stage(plugin, tmp_path)
    build = runpy.run_path(str(source / ".." / ".." / "mnn_core" / "backend" / "build.py"))
    assert Path(build["get_include"](), "mnn_core", "abi.h").is_file()
    cython = Path(build["get_cython_include"]())
    assert (cython / "mnn_core" / "abi.pxd").is_file() and cython.is_relative_to(tmp_path)
    for pxi in (ROOT / "mnn_core" / "backend").glob("*.pxi"):
        assert (cython / "mnn_core" / "backend" / pxi.name).is_file()

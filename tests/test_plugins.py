"""Plugin discovery through real entry points: broken and unavailable plugins
are listed with their reasons and never break the rest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mnn_core as mnn

ROOT = Path(__file__).resolve().parents[1]

UNAVAILABLE = """
from mnn_core import hookimpl
from mnn_core.backend import Availability, Backend, KernelSpec

class NoDevice(Backend):
    name = "nodevice"
    def availability(self):
        return Availability(False, "no device found (install the driver)")
    def kernels(self):
        return {"Relu": KernelSpec("Relu")}

@hookimpl
def mnn_register_backends(register):
    register(NoDevice())
"""

MISSPELLED = """
from mnn_core import hookimpl

@hookimpl
def mnn_register_backend(register):  # typo: not a hook
    pass
"""


def _dist(site: Path, dist: str, ep: str, module: str, source: str) -> None:
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"  # dist-info names use underscores
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[mnn]\n{ep} = {module}\n")
    (site / f"{module}.py").write_text(source)


@pytest.fixture
def site(tmp_path):
    _dist(tmp_path, "mnn-broken", "broken", "mnn_broken_plugin", "raise ImportError('libfoo.so.1 not found')\n")
    _dist(tmp_path, "mnn-nodevice", "nodevice", "mnn_nodevice_plugin", UNAVAILABLE)
    _dist(tmp_path, "mnn-typo", "typo", "mnn_typo_plugin", MISSPELLED)
    return tmp_path


def _mnn(site, *args, **env):
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), **env}
    return subprocess.run([sys.executable, "-m", "mnn_core", *args], capture_output=True, text=True, env=environ)


def test_reference_backend_is_listed():
    names = [r.name for r in mnn.backends()]
    assert "reference" in names


def test_backends_json_lists_reasons_and_survives_broken_plugins(site):
    done = _mnn(site, "backends", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    assert rows["reference"]["available"] and rows["reference"]["ops"] > 30
    assert not rows["broken"]["available"]
    assert "libfoo.so.1 not found" in rows["broken"]["reason"] and rows["broken"]["package"] == "mnn-broken"
    assert not rows["nodevice"]["available"]
    assert rows["nodevice"]["reason"] == "no device found (install the driver)"
    assert "invalid plugin" in rows["typo"]["reason"] and "mnn_register_backend" in rows["typo"]["reason"]


def test_table_output_and_session_still_work(site):
    done = _mnn(site, "backends")
    assert done.returncode == 0
    assert "unavailable: no device found" in done.stdout
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    code = (
        "import numpy as np, mnn_core as mnn\n"
        "b = mnn.GraphBuilder(); x = b.input('x', (2,)); b.output(b.Relu(x), 'y')\n"
        "print(mnn.Session(b.build(), backend='auto').run({'x': np.array([-1, 2], 'float32')})['y'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert out.stdout.strip() == "[0. 2.]", out.stderr


def test_choosing_an_unavailable_or_broken_backend_says_why(site):
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    code = (
        "import mnn_core as mnn\n"
        "b = mnn.GraphBuilder(); x = b.input('x', (2,)); b.output(b.Relu(x), 'y'); g = b.build()\n"
        "for name in ('nodevice', 'broken'):\n"
        "    try:\n"
        "        mnn.Session(g, backend=name)\n"
        "    except mnn.BackendError as e:\n"
        "        print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ).stdout
    assert "'nodevice' is not available here: no device found" in out
    assert "its plugin failed to load: import failed: ImportError: libfoo.so.1 not found" in out

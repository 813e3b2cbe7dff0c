"""Alibaba's MNN wheel and mnn in one venv: both import, both CLIs run, and uninstalling either
leaves the other working (tools/coexist_mnn.py does the work; about a minute)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mnn_wheel_and_mnn_share_a_venv(tmp_path):
    pytest.importorskip("onnx", reason="the check converts a small ONNX model with MNN's mnnconvert")
    pytest.importorskip("Cython", reason="the check builds the mnn-core wheel from this tree")
    cache = Path(os.environ.get("MNN_OFFICIAL_WHEEL_CACHE", tmp_path / "mnn-wheel"))
    cmd = [sys.executable, str(ROOT / "tools" / "coexist_mnn.py"), "--cache", str(cache)]
    if os.environ.get("MNN_WHEELS"):  # built wheels (tools/build_wheels.py's dist/) instead of a fresh build
        cmd += ["--wheels", os.environ["MNN_WHEELS"]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode == 77:
        pytest.skip(f"no network for the check (the MNN wheel, numpy, pluggy from PyPI): {proc.stdout.strip()}")
    assert proc.returncode == 0, proc.stdout + proc.stderr

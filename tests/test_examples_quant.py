"""The quantization examples run end to end (a few images, a few steps), so that they cannot rot: each prints
its table with every row, from float training through mnn PTQ/QAT to the PyTorch and ONNX Runtime peers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mnn_core.data import FASHION_MNIST_DIR

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")
if not os.path.isdir(FASHION_MNIST_DIR):
    pytest.skip(
        f"Fashion-MNIST is not installed at {FASHION_MNIST_DIR} (apt-get install dataset-fashion-mnist)",
        allow_module_level=True,
    )


def run_example(script: str, *args: str) -> list[str]:
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if line.startswith("| ") and "%" in line]


def accuracy(row: str) -> float:
    return float(row.split("|")[2].strip().rstrip("%"))


def test_quant_mobilenet_example_runs_every_row():
    rows = run_example(
        "quant_mobilenet.py",
        "--epochs",
        "1",
        "--train-limit",
        "320",
        "--test-limit",
        "100",
        "--calib",
        "32",
        "--qat-steps",
        "2",
    )
    names = [r.split("|")[1].strip() for r in rows]
    for want in (
        "mnn float32",
        "mnn PTQ int8, minmax",
        "mnn PTQ int8, kl",
        "mnn QAT int8",
        "QAT's baseline",
        "PyTorch eager PTQ int8 (x86, fused conv+bn, ReLU6 module kept)",
        "PyTorch eager QAT int8",
        "ReLU6 -> ReLU, fused conv+bn+relu",
        "ONNX Runtime quantize_static",
        "imported and run by mnn",
    ):
        assert any(want in n for n in names), (want, names)
    assert len(rows) == 14
    assert all(0.0 <= accuracy(r) <= 100.0 for r in rows)


def test_lenet_qat_example_runs_every_row():
    rows = run_example(
        "qat.py", "--epochs", "1", "--train-limit", "320", "--qat-steps", "2", "--calib", "32", "--test-limit", "100"
    )
    names = [r.split("|")[1].strip() for r in rows]
    assert len(rows) == 11 and names[0] == "mnn float32" and "ONNX Runtime" in names[-1], names

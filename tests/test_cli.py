"""The `mnnx` command line, run as users run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture
def model(tmp_path, rng):
    b = mnn.GraphBuilder("clinet")
    x = b.input("x", ("N", 6))
    y = b.Relu(b.Gemm(x, b.const(rng.standard_normal((6, 4)).astype("float32")), b.const(np.ones(4, "float32"))))
    b.output(y, "y")
    path = tmp_path / "net.mnn"
    mnn.save(b.build(), path)
    return path


def test_info(model, capsys):
    assert main(["info", str(model)]) == 0
    out = capsys.readouterr().out
    assert "input      x: float32[N, 6]" in out and "output     y: float32[N, 4]" in out
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["parameters"] == 28 and info["ops"] == {"Gemm": 1, "Relu": 1}


def test_run_writes_outputs_and_explains(model, tmp_path, capsys):
    x = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert (
        main(["run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--explain", "--output-dir", str(out_dir)]) == 0
    )
    text = capsys.readouterr().out
    assert "backend" in text and "Gemm" in text and "arena" in text
    want = mnn.Session(mnn.load(model)).run({"x": x})["y"]
    np.testing.assert_array_equal(np.load(out_dir / "y.npy"), want)


def test_run_without_inputs_says_what_is_needed(model, capsys):
    assert main(["run", str(model)]) == 2
    assert "no data for input(s) x float32[N, 6]: pass --input NAME=FILE.npy, or --random" in capsys.readouterr().err
    assert main(["run", str(model), "--random", "--shape", "x=3,6"]) == 0
    assert "y: float32[3, 4]" in capsys.readouterr().out


def test_bench_table_and_json(model, capsys):
    assert (
        main(["bench", str(model), "--backend", "reference", "--threads", "1,2", "--repeat", "3", "--shape", "x=8,6"])
        == 0
    )
    out = capsys.readouterr().out
    assert "median ms" in out and out.count("reference") >= 2
    assert main(["bench", str(model), "--repeat", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert rows[0]["backend"] == "reference" and rows[0]["median_ms"] > 0 and rows[0]["max_abs_diff"] == 0


def test_convert_reencodes_weights(model, tmp_path, capsys):
    out = tmp_path / "half.mnn"
    assert main(["convert", str(model), "-o", str(out), "--weights", "fp16"]) == 0
    assert mnn.load(out).metadata.get("mnn.weights") == "fp16"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "missing.mnn"], "does not exist"),
        (["info", "model.txt"], "unknown model type '.txt'"),
        (["run", "MODEL", "--backend", "nope", "--random"], "no backend named 'nope'"),
        (["bench", "MODEL", "--threads", "one"], "--threads takes a list"),
        (["run", "MODEL", "--input", "x"], "--input takes NAME=FILE.npy"),
    ],
)
def test_errors_are_one_line(model, argv, message, capsys):
    argv = [str(model) if a == "MODEL" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mnnx: error: ") and message in err and "Traceback" not in err


def test_corrupt_model_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "bad.mnn"
    bad.write_bytes(b"this is not a model")
    assert main(["info", str(bad)]) == 2
    assert "mnnx: error:" in capsys.readouterr().err


def test_help_teaches():
    done = subprocess.run([sys.executable, "-m", "mnn_core", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "examples:" in done.stdout and "mnnx bench" in done.stdout


def test_no_command_prints_help_and_fails():
    done = subprocess.run([sys.executable, "-m", "mnn_core"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage: mnnx" in done.stderr and "examples:" in done.stderr


def test_ci_runs_readme_test_command():
    """README's test command is the one .ci/run executes."""
    readme = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    block = readme.split("### Run the tests", 1)[1].split("```", 2)[1]
    command = block.strip().splitlines()[-1].strip()
    assert command and command in ci, command
    assert os.access(README.parent / ".ci" / "run", os.X_OK)


def test_export_round_trips_through_onnxruntime(model, tmp_path, capsys):
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    out = tmp_path / "net.onnx"
    assert main(["export", str(model), "-o", str(out)]) == 0
    x = np.linspace(-1, 1, 18, dtype="float32").reshape(3, 6)
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, mnn.Session(mnn.load(model)).run({"x": x})["y"], rtol=1e-5, atol=1e-6)

"""The ONNX importer under mutation: a damaged or hostile model loads (and runs) or fails with
one MnnError, never a crash, a hang, another exception, unbounded memory or a read outside
its folder. tools/fuzz_onnx.py is the fuzzer (the long run: --count 20000); CI runs a few
hundred mutants of each kind of seed, in child processes under a memory limit."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnx")
pytest.importorskip("torch")
if not sys.platform.startswith("linux"):
    pytest.skip("the fuzz children use RLIMIT_AS, FIFOs and /proc (Linux)", allow_module_level=True)

TOOL = Path(__file__).resolve().parents[1] / "tools" / "fuzz_onnx.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("fuzz_onnx", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutated_onnx_models_load_or_raise_mnn_error(tmp_path):
    fuzz = load_tool()
    summary, findings = fuzz.fuzz(count=300, jobs=2, seed=20260101, out=tmp_path, log=lambda *_: None)
    assert not findings, "\n".join(
        f"{f['kind']} #{f['index']} ({f['seed']}, {f['phase']}): {f['detail']}" for f in findings[:10]
    )
    assert summary["ran"] > 30 and summary["rejected_at_load"] > 150, summary

"""End to end on the architecture zoo (benchmarks/zoo_arch): two small models, each exported by
torch's dynamo exporter and by the legacy one, run on the reference backend against ONNX Runtime.
The batch run (3) is not the one traced (2): the files' batch dimension must really be dynamic."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the architecture zoo exports torch modules: pip install torch")
pytest.importorskip("onnxscript", reason="torch's dynamo exporter needs onnxscript: pip install onnxscript")
pytest.importorskip("onnxruntime", reason="the check compares with ONNX Runtime: pip install onnxruntime")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from zoo_arch import ARCHES  # noqa: E402
from zoo_arch.check import check_arch  # noqa: E402
from zoo_arch.export import export_info  # noqa: E402


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo-arch")


@pytest.mark.parametrize("exporter", ["dynamo", "legacy"])
@pytest.mark.parametrize("name", ["gru-tagger", "unet"])
def test_small_export_matches_onnxruntime_on_reference(name, exporter, cache):
    arch = ARCHES[name]
    result = check_arch(arch, exporter, backend="reference", batch=3, cache=cache, small=True)
    assert result.status == "ok", f"{name} ({exporter}): {result.status}: {result.detail}"
    assert result.error is not None and result.error < 1e-4
    assert export_info(arch, exporter, cache, small=True)["dynamic_batch"]
    assert (cache / f"{name}-small" / f"{exporter}.onnx").exists()


def test_registry_is_complete_and_seeded():
    assert len(ARCHES) >= 11
    for arch in ARCHES.values():
        a, b = arch.make_feeds(2, small=True), arch.make_feeds(2, small=True)
        assert list(a) and all((a[k] == b[k]).all() for k in a), arch.name

"""The real-model corpus's slanet-table (a Loop decoder: its body runs as child Sessions planned on
this backend; ScatterElements, OneHot, ArgMax inside) entirely on opencl with fallback=False against
ONNX Runtime, where the corpus cache holds it (python -m mnn_core.zoo fetch); skipped otherwise."""

import pytest
from conftest import needs_opencl

from mnn_core.testing.corpus_runs import run_cached

pytestmark = needs_opencl


@pytest.mark.slow
def test_slanet_table_matches_onnxruntime():
    skipped = run_cached("slanet-table", "opencl")
    if skipped:
        pytest.skip(skipped)

"""The real-model corpus's slanet-table (a Loop decoder: its body runs as child Sessions planned on
this backend; ScatterElements, OneHot, ArgMax inside) entirely on opengl with fallback=False against
ONNX Runtime, where the corpus cache holds it (python -m mnn_core.zoo fetch); skipped otherwise."""

import pytest
from opengl_testing import needs_opengl

from mnn_core.testing.corpus_runs import run_cached

pytestmark = needs_opengl


@pytest.mark.slow
def test_slanet_table_matches_onnxruntime():
    skipped = run_cached("slanet-table", "opengl")
    if skipped:
        pytest.skip(skipped)

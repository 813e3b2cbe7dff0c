"""The integer and classic-ML kernels against the reference on mnn_core.testing.gpu_samples_quant's
random cases (forests and linear models with many classes, two classes and NaN features, scalers,
normalizers, integer arithmetic with broadcasting, quantized ops), for every op mnn-opengl claims."""

import pytest
from opengl_testing import needs_opengl

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples_quant import quant_cases

pytestmark = needs_opengl
CASES = quant_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
def test_matches_reference(case):
    from mnn_opengl import KERNELS

    if case.op not in KERNELS:
        pytest.skip(f"mnn-opengl has no {case.op} kernel")
    skipped = run_case(case, "opengl", rtol=1e-4, atol=1e-5)
    assert skipped is None, skipped

"""The integer and classic-ML kernels against the reference on mnn_core.testing.gpu_samples_quant's
random cases: per-channel / per-row / per-column zero points, integer arithmetic with broadcasting,
DynamicQuantizeLSTM at odd sizes, forests and linear models with many classes and NaN features."""

import pytest
from vulkan_testing import needs_vulkan

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples_quant import quant_cases

CASES = quant_cases()


@needs_vulkan
@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
def test_matches_reference(case):
    skipped = run_case(case, "vulkan", rtol=1e-4, atol=1e-5)
    assert skipped is None, skipped

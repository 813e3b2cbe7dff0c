"""The GPU backends' extra random cases (mnn_core.testing.gpu_samples: ConvTranspose with groups,
dilations, crops and 1-D; recurrent layers; GatherND, OneHot, ReduceSumSquare; bool views) against
the reference, for every op mnn-opengl claims; fp32 at rtol 1e-4 / atol 1e-5."""

import pytest
from opengl_testing import needs_opengl

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples import gpu_cases

pytestmark = needs_opengl
CASES = gpu_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
def test_matches_reference(case):
    from mnn_opengl import KERNELS

    if case.op not in KERNELS:
        pytest.skip(f"mnn-opengl has no {case.op} kernel")
    skipped = run_case(case, "opengl")
    assert skipped is None, skipped

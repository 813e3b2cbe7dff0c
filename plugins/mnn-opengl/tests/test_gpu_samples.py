"""The GPU backends' extra random cases against the reference, for every op mnn-opengl claims; fp32 at
rtol 1e-4 / atol 1e-5: mnn_core.testing.gpu_samples (ConvTranspose with groups, dilations, crops and
1-D; recurrent layers; GatherND, OneHot, ReduceSumSquare; bool views) and gpu_samples_quant (forests
and linear models with many classes, two classes and NaN features, scalers, normalizers, integer
arithmetic with broadcasting, quantized ops)."""

import pytest
from opengl_testing import needs_opengl

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples import gpu_cases
from mnn_core.testing.gpu_samples_quant import quant_cases

pytestmark = needs_opengl
CASES = [(f"{c.op}-{c.index}", c) for c in gpu_cases()] + [(f"quant-{c.op}-{c.index}", c) for c in quant_cases()]


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[name for name, _ in CASES])
def test_matches_reference(case):
    from mnn_opengl import KERNELS

    if case.op not in KERNELS:
        pytest.skip(f"mnn-opengl has no {case.op} kernel")
    skipped = run_case(case, "opengl", rtol=1e-4, atol=1e-5)
    assert skipped is None, skipped

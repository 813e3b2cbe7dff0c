"""RNN / GRU / LSTM (kernels/rnn.cl) and ConvTranspose (conv2d_c1 over the zero-stuffed input) against
the reference on mnn_core.testing.gpu_samples' random cases: odd sizes, every direction with sequence lengths
and initial states, peepholes, clip, layout 1, groups, dilations, crops; fp32, and precision="low"."""

import pytest
from conftest import needs_opencl

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples import gpu_cases

CASES = gpu_cases()


@needs_opencl
@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_matches_reference(case, precision):
    rtol, atol = (1e-4, 1e-5) if precision == "normal" else (1e-2, 1e-2)
    skipped = run_case(case, "opencl", rtol=rtol, atol=atol, precision=precision)
    assert skipped is None, skipped

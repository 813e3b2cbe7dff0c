"""RNN / GRU / LSTM (rnn_step.comp) and ConvTranspose (conv2d.comp over the zero-stuffed input)
against the reference on mnn_core.testing.gpu_samples' random cases: odd sizes, every direction with
sequence lengths and initial states, peepholes, clip, layout 1, groups, dilations, crops; in fp32,
and at precision="low" (float16 storage) to an fp16 tolerance."""

import pytest
from vulkan_testing import unavailable_reason

from mnn_core.testing.conformance import run_case
from mnn_core.testing.gpu_samples import gpu_cases

CASES = gpu_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
@pytest.mark.parametrize("precision", ["normal", "low"])
def test_matches_reference(case, precision):
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    rtol, atol = (1e-4, 1e-5) if precision == "normal" else (2e-2, 1e-2)  # fp16-rounded inputs and weights
    skipped = run_case(case, "vulkan", rtol=rtol, atol=atol, precision=precision)
    assert skipped is None, skipped

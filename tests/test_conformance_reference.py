"""The conformance machinery on the reference backend: one case per op through a Session (graph,
scheduler, memory plan, the run loop's Python executions, weights as constants, a second run), checked
against the reference kernel called directly. That proves the plumbing every backend's suite relies on,
for every op's arity, views and multiple outputs; whether the reference kernels are *right* is for the
independent oracles (tests/test_reference_vs_onnxruntime.py, tests/test_oracle_torch.py, and
tests/test_oracle_coverage.py, which fails on any op with neither), not for the reference judging itself
on every sample."""

import numpy as np
import pytest

from mnn_core.testing import BackendConformance
from mnn_core.testing.conformance import conformance_cases, run_case


class TestReferenceConformance(BackendConformance):
    backend = "reference"
    cases_per_op = 1


def test_a_wrong_result_fails_the_case():
    """run_case compares what the session computed: a case whose expected output is off must fail."""
    case = conformance_cases({"Conv"})[0]
    case.expected = [e + np.float32(1e-3) for e in case.expected]
    with pytest.raises(AssertionError, match="Conv"):
        run_case(case, "reference")

"""ScatterElements (every axis, int32/int64 indices, each reduction with duplicate indices) and
ArgMax / ArgMin (keepdims, select_last_index, long rows) against the reference on random inputs of
odd sizes: mnn_core.testing.index_samples, fp32 at rtol 1e-4 / atol 1e-5, integers exact; and
comparisons of int32 / int64 operands."""

import numpy as np
import pytest
from conftest import needs_opencl

from mnn_core.testing.conformance import run_case
from mnn_core.testing.index_samples import index_cases

pytestmark = needs_opencl
CASES = index_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.op}-{c.index}" for c in CASES])
def test_matches_reference(case):
    skipped = run_case(case, "opencl", rtol=1e-4, atol=1e-5)
    assert skipped is None, skipped


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_integer_comparisons_match_reference(op, dtype):
    """A Loop's counter test (Less of int64) and friends, broadcasting, odd sizes."""
    from mnn_core.ops import run_reference
    from mnn_core.testing.conformance import ConformanceCase, conformance_graph

    rng = np.random.default_rng(7)
    for shape_a, shape_b in [((7,), (7,)), ((3, 5), (1, 5)), ((2, 1, 9), (3, 1)), ((), ())]:
        a = rng.integers(-3, 3, shape_a).astype(dtype)
        b = rng.integers(-3, 3, shape_b).astype(dtype)
        graph, feeds = conformance_graph(op, [a, b], {})
        case = ConformanceCase(op, 0, graph, feeds, run_reference(op, [a, b], {}), f"{dtype} {shape_a} {shape_b}")
        assert run_case(case, "opencl") is None

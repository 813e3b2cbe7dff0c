"""Conformance tests that backend packages subclass.

    # plugins/mnn-foo/tests/test_conformance.py
    from mnn_core.testing import BackendConformance

    class TestFoo(BackendConformance):
        backend = "foo"

pytest then runs, for every op the backend claims and every random sample
its schema provides (several shapes, odd sizes, broadcasting, empty batch),
a one-node graph through `Session(backend="foo", fallback=False)` and checks
the outputs against the reference kernel. Cases the backend declines (its
KernelSpec says why) are skipped with that reason, so the report shows them.

A plugin's conftest calls `check_required("foo")` in `pytest_configure`, so that a run with
MNN_REQUIRE_BACKENDS naming "foo" (CI) fails at once where the backend is unavailable, instead of
passing on skips (required.py).
"""

from __future__ import annotations

from .conformance import (
    BackendConformance,
    ConformanceCase,
    conformance_cases,
    conformance_graph,
    one_node_graph,
    run_case,
)
from .required import check_required

__all__ = [
    "BackendConformance",
    "ConformanceCase",
    "check_required",
    "conformance_cases",
    "conformance_graph",
    "one_node_graph",
    "run_case",
]

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
"""

from __future__ import annotations

from .conformance import BackendConformance, ConformanceCase, conformance_cases, run_case

__all__ = ["BackendConformance", "ConformanceCase", "conformance_cases", "run_case"]

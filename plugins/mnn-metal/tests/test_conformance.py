"""Every op the backend claims against the reference backend, on a real Metal device.

Off macOS (this repository's CI) every case is skipped with the reason the
backend gives ("Metal needs macOS; this is Linux"); on a Mac these are the
tests that matter. The op mapping itself is checked on Linux by test_plans.py.
"""

from mnn_core.testing import BackendConformance


class TestMetal(BackendConformance):
    backend = "metal"


class TestMetalHalfWeights(BackendConformance):
    backend = "metal"
    precision = "low"
    ops = ("Conv",)
    rtol, atol = 2e-2, 2e-3

"""Every op the backend claims against the reference backend, on a real Metal device.

Off macOS (this repository's CI) every case is skipped with the reason the
backend gives ("Metal needs macOS; this is Linux"); on a Mac these are the
tests that matter. The op mapping itself is checked on Linux by test_plans.py
and test_fp16.py (the plans run on lavapipe there, at both precisions).
"""

import numpy as np
import pytest

from mnn_core.plugins import get_plugins
from mnn_core.testing import BackendConformance

#: step functions: an input rounded to float16 may cross the step (2.9999 -> 3.0), so under
#: precision="low" they are checked on inputs float16 represents exactly (as in mnn-vulkan)
STEP_OPS = ("Floor", "Ceil", "Round", "Sign")


def _claimed_but_steps() -> tuple[str, ...]:
    from mnn_metal.kernels import KERNELS

    return tuple(sorted(set(KERNELS) - set(STEP_OPS)))


class TestMetal(BackendConformance):
    backend = "metal"


class TestMetalFp16(BackendConformance):
    """precision="low": float16 tensors, the *_h kernels, float32 copies for Pad; inputs
    and outputs each round by up to 2^-11 relative (mnn-vulkan's fp16 tolerance)."""

    backend = "metal"
    precision = "low"
    rtol, atol = 1e-2, 1e-2
    ops = _claimed_but_steps()


class TestMetalFp16Fma(BackendConformance):
    """The *_hf kernels: float16 FMAs in the GEMM tiles and depthwise windows."""

    backend = "metal"
    precision = "low"
    rtol, atol = 1e-2, 1e-2
    options = {"metal.fp16_fma": True}
    ops = ("Conv", "MatMul", "Gemm")


@pytest.mark.skipif(not get_plugins().backends["metal"].availability(), reason="Metal is unavailable here")
def test_step_functions_on_fp16_exact_inputs():
    import mnn_core as mnn
    from mnn_core.testing.conformance import conformance_cases

    for case in conformance_cases(set(STEP_OPS)):
        feeds = {k: v.astype(np.float16).astype(v.dtype) for k, v in case.feeds.items()}
        want = mnn.Session(case.graph, backend="reference").run(feeds)
        got = mnn.Session(case.graph, backend="metal", fallback=False, precision="low").run(feeds)
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{case.op} [{case.label}]")

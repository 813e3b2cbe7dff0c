"""Every op mnn-arm claims, on every sample its schema provides, against the
reference backend: the fp32 path, the fp16 path with fp16 activations
(precision="low", when the CPU has asimdhp: every float tensor stored as fp16;
1e-2 relative), the fp16 arithmetic on fp32 tensors (option
arm.fp16_activations=False) and the int8 ops (bit-exact, sdot path when the CPU
has asimddp)."""

from __future__ import annotations

import pytest
from conftest import ON_ARM, needs_arm

from mnn_core.testing import BackendConformance


def _fp16_runnable() -> bool:
    if not ON_ARM:
        return False
    from mnn_arm import paths

    return paths.runnable("fp16")


@needs_arm
class TestFP32(BackendConformance):
    backend = "arm"


#: ops whose output jumps where the input crosses an integer: fp16 storage of an input within 1e-2 of
#: one moves the result by a whole step, so no tolerance compares them with the fp32 reference
#: (quantization is such a step: x / scale rounded; the samples' scales are graph inputs, fp16 too)
FP16_STEP_OPS = frozenset({"Floor", "Ceil", "Round", "QuantizeLinear", "QLinearAdd"})


def _all_ops_but(skip):
    from mnn_core.ops import all_schemas

    return tuple(sorted(set(all_schemas()) - skip))


@needs_arm
@pytest.mark.skipif(not _fp16_runnable(), reason="this CPU lacks asimdhp (no fp16 path)")
class TestFP16(BackendConformance):
    backend = "arm"
    precision = "low"
    rtol = 1e-2
    atol = 1e-2
    ops = _all_ops_but(FP16_STEP_OPS)


@needs_arm
@pytest.mark.skipif(not _fp16_runnable(), reason="this CPU lacks asimdhp (no fp16 path)")
class TestFP16OnFP32Tensors(BackendConformance):
    backend = "arm"
    precision = "low"
    options = {"arm.fp16_activations": False}
    rtol = 1e-2
    atol = 1e-2
    ops = ("Conv", "ConvTranspose", "Gemm", "MatMul")

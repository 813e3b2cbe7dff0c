"""Every op the x86 backend claims, on every sample its schema provides,
against the reference backend: once per ISA level, forced through the
"x86.isa" session option (levels this CPU lacks are skipped), and under
precision="low" (bf16 GEMMs) where the CPU has AVX-512 BF16."""

from __future__ import annotations

import pytest
from mnn_x86 import isa
from mnn_x86._x86 import bf16_runs

from mnn_core.testing import BackendConformance


def _needs(level: str):
    return pytest.mark.skipif(level not in isa.supported(), reason=f"this CPU does not run {level}")


@_needs("scalar")
class TestScalar(BackendConformance):
    backend = "x86"
    options = {"x86.isa": "scalar"}


@_needs("avx2")
class TestAVX2(BackendConformance):
    backend = "x86"
    options = {"x86.isa": "avx2"}


@_needs("avx2")
class TestAVX2TwoThreads(BackendConformance):
    backend = "x86"
    options = {"x86.isa": "avx2"}
    threads = 2


@_needs("avx512")
class TestAVX512(BackendConformance):
    backend = "x86"
    options = {"x86.isa": "avx512"}


@_needs("avx512")
class TestAVX512TwoThreads(BackendConformance):
    backend = "x86"
    options = {"x86.isa": "avx512"}
    threads = 2


@_needs("avx512")
@pytest.mark.skipif(not bf16_runs("avx512"), reason="this CPU lacks AVX-512 BF16 (no bf16 GEMMs)")
class TestAVX512BF16(BackendConformance):
    """precision="low": Conv, Gemm and MatMul on bf16 operands (8-bit significands: each product
    within 2^-7 of itself; tests/test_bf16.py bounds them exactly), every other op as in fp32.
    The schema's Conv samples need 2e-2 (1e-2 fails two of them), so 3e-2."""

    backend = "x86"
    options = {"x86.isa": "avx512"}
    precision = "low"
    threads = 2
    rtol = 3e-2
    atol = 3e-2

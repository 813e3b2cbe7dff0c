"""Every op the x86 backend claims, on every sample its schema provides,
against the reference backend: once per ISA level, forced through the
"x86.isa" session option (levels this CPU lacks are skipped)."""

from __future__ import annotations

import pytest
from mnn_x86 import isa

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

"""Shared fixtures of the mnn-opencl tests: they need a real OpenCL platform
(PoCL in CI, NVIDIA on the H200) and skip, saying why, where there is none."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.plugins import get_plugins


def opencl_backend():
    return get_plugins().backends.get("opencl")


def unavailable_reason() -> str:
    backend = opencl_backend()
    if backend is None:
        return "mnn-opencl is not installed (pip install plugins/mnn-opencl)"
    avail = backend.availability()
    return "" if avail else f"no usable OpenCL device: {avail.reason}"


needs_opencl = pytest.mark.skipif(bool(unavailable_reason()), reason=unavailable_reason() or "available")


def pytest_report_header(config):
    backend = opencl_backend()
    if backend is None or not backend.availability():
        return f"mnn-opencl: unavailable ({unavailable_reason()})"
    dev = backend.devices()[0]
    return f"mnn-opencl device: {dev.name} (driver {dev.extra['driver']}, fp16 {dev.extra['fp16']})"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def pytest_configure(config):
    from mnn_core.testing import check_required

    check_required("opencl")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run, not skips it

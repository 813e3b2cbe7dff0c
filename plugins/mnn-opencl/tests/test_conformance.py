"""Every op mnn-opencl claims, on every sample its schema provides (odd sizes,
broadcasting, empty batch), against the reference backend, with fallback off.
On PoCL in CI; on whatever device MNN_OPENCL_DEVICE selects elsewhere."""

from __future__ import annotations

import pytest

from mnn_core.testing import BackendConformance


class TestOpenCL(BackendConformance):
    backend = "opencl"
    rtol = 1e-4
    atol = 1e-5


class TestOpenCLLowPrecision(BackendConformance):
    """precision="low" with the fp16 variant forced (half conv weights, float sums): what
    a device with cl_khr_fp16 runs; PoCL lacks the extension but runs vload_half."""

    backend = "opencl"
    precision = "low"
    rtol = 1e-2
    atol = 1e-2
    ops = ("Conv", "MatMul", "Gemm")

    @pytest.fixture(autouse=True)
    def _force_fp16(self, monkeypatch):
        monkeypatch.setenv("MNN_OPENCL_FP16", "force")


class TestOpenCLSplitK(BackendConformance):
    """Convolutions with their input channels split in slices (what a GPU does for
    small outputs), forced here through MNN_OPENCL_MIN_ITEMS."""

    backend = "opencl"
    ops = ("Conv",)

    @pytest.fixture(autouse=True)
    def _split(self, monkeypatch):
        monkeypatch.setenv("MNN_OPENCL_MIN_ITEMS", "1000000")

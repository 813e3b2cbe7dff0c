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


def run_conv(rng, shape, wshape, attrs, options, bias=True) -> list:
    """One Conv of random input `shape`, weights `wshape` and bias on OpenCL (fallback off, `options`) against the
    reference backend; returns the kernels that ran."""
    from mnn_core.graph.ir import Graph, Node, TensorInfo
    from mnn_core.ops import run_reference
    from mnn_core.session import Session

    x = rng.uniform(-1, 1, shape).astype("float32")
    w = rng.uniform(-1, 1, wshape).astype("float32")
    inits = {"w": w}
    ins = ["x", "w"]
    if bias:
        inits["b"] = rng.uniform(-1, 1, wshape[0]).astype("float32")
        ins.append("b")
    graph = Graph(
        inputs={"x": TensorInfo(shape, "float32")},
        initializers=inits,
        nodes=[Node("Conv", ins, ["y"], attrs, "conv")],
        outputs=["y"],
    )
    sess = Session(graph, backend="opencl", fallback=False, optimize=False, options=options)
    got = sess.run({"x": x})["y"]
    want = run_reference("Conv", [x, w] + ([inits["b"]] if bias else []), attrs)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    return opencl_backend().segments[-1]["kernels"]

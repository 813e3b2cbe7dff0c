"""mnn as an onnx.backend Backend, and the conformance runner built on it."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mnn_core.conformance as conformance  # noqa: E402
import mnn_core.onnx_backend as backend  # noqa: E402
from mnn_core.convert import OnnxImportError  # noqa: E402

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "m", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def add_relu():
    return model(
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["r"])],
        [vi("a", [2, 3]), vi("b", [3])],
        [vi("r", None), vi("s", None)],
    )


@pytest.mark.parametrize("device,kwargs", [("CPU", {}), ("CPU:reference", {}), ("CPU", {"backend": "reference"})])
def test_prepare_and_run_in_output_order(rng, device, kwargs):
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    rep = backend.prepare(add_relu(), device, **kwargs)
    r, s = rep.run([a, b])
    np.testing.assert_allclose(s, a + b, rtol=1e-6)
    np.testing.assert_allclose(r, np.maximum(a + b, 0), rtol=1e-6)
    r2, _ = rep.run({"a": a, "b": b})
    np.testing.assert_array_equal(r, r2)


def test_devices():
    assert backend.supports_device("CPU")
    assert backend.supports_device("CPU:reference")
    assert not backend.supports_device("CPU:no-such-backend")
    assert not backend.supports_device("CUDA")
    with pytest.raises(Exception, match="disagree"):
        backend.prepare(add_relu(), "CPU:reference", backend="x86")


def test_run_node_and_run_model(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    (y,) = backend.run_node(helper.make_node("Softmax", ["x"], ["y"], axis=1), [x])
    np.testing.assert_allclose(y, np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5)
    outs = backend.run_model(add_relu(), [x[:2, :3], x[2, :3]])
    assert len(outs) == 2


def test_value_dependent_inputs_are_bound_at_run_time(rng):
    m = model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"]), helper.make_node("Slice", ["y", "starts", "ends"], ["z"])],
        [
            vi("x", [2, 6]),
            vi("shape", [2], TensorProto.INT64),
            vi("starts", [1], TensorProto.INT64),
            vi("ends", [1], TensorProto.INT64),
        ],
        [vi("z", None)],
    )
    rep = backend.prepare(m, "CPU:reference")
    x = rng.standard_normal((2, 6)).astype(np.float32)
    (z,) = rep.run([x, np.array([3, 4]), np.array([1]), np.array([3])])
    np.testing.assert_array_equal(z, x.reshape(3, 4)[1:3])
    (z,) = rep.run([x, np.array([4, 3]), np.array([0]), np.array([2])])  # other values: a new plan
    np.testing.assert_array_equal(z, x.reshape(4, 3)[0:2])
    assert set(rep.session.value_inputs) == {"shape", "starts", "ends"}


def test_unsupported_model_raises_at_prepare():
    m = model([helper.make_node("RandomUniformLike", ["x"], ["y"])], [vi("x", [4])], [vi("y", None)])
    with pytest.raises(OnnxImportError, match="RandomUniformLike"):
        backend.prepare(m)


# -- the conformance runner --------------------------------------------------------------------------


def _case(name, m, inputs, outputs):
    return conformance.Case(name, name, m.SerializeToString(), [(inputs, outputs)], 1e-3, 1e-7)


def _cases(rng):
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    good = _case("good", add_relu(), [a, b], [np.maximum(a + b, 0), a + b])
    wrong = _case("wrong", add_relu(), [a, b], [np.maximum(a + b, 0) + 1, a + b])
    random = model([helper.make_node("RandomUniformLike", ["x"], ["y"])], [vi("x", [3])], [vi("y", None)])
    unsupported = _case("unsupported", random, [a[0]], [np.zeros(3, np.float32)])
    return [good, wrong, unsupported]


def test_runner_outcomes(rng):
    results = conformance.run_all(_cases(rng), "reference", jobs=2, timeout=60)
    assert [r.status for r in results] == ["passed", "failed", "unsupported"]
    assert "values differ" in results[1].detail
    assert results[2].reasons == ["RandomUniformLike"]
    report = conformance.render({"reference": results}, _meta("reference", "a CPU"))
    assert "| reference | 1 | 1 | 1 | 3 | today, a CPU, onnx" in report
    assert "### Failures by op" in report
    assert "Measured on today on a CPU by `test`" in report


def _meta(backend, where, date="today"):
    return {
        "command": "test",
        "date": date,
        "seconds": 1.0,
        "jobs": 2,
        "timeout": 60,
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        "cases": 3,
        "where": {backend: where},
    }


def test_report_keeps_the_backends_not_measured_again():
    """A GPU backend measured on another machine stays in the report when the CPU ones are redone."""

    def results(statuses):
        return [
            conformance.Result(f"case{i}", "Add", s, "values differ" if s == "failed" else "")
            for i, s in enumerate(statuses)
        ]

    first = conformance.render({"reference": results(["passed", "failed", "passed"])}, _meta("reference", "cpu"))
    both = conformance.render(
        {"vulkan": results(["passed", "unsupported", "passed"])},
        _meta("vulkan", "NVIDIA H200", date="day 2"),
        conformance.parse_report(first),
    )
    again = conformance.render(
        {"reference": results(["passed", "passed", "passed"])},
        _meta("reference", "cpu", date="day 3"),
        conformance.parse_report(both),
    )
    assert "| vulkan | 2 | 0 | 1 | 3 | day 2, NVIDIA H200" in again
    assert "| reference | 3 | 0 | 0 | 3 | day 3, cpu" in again
    assert "| reference | 2 | 1 |" not in again
    assert again.count("## vulkan") == 1 and again.count("## reference") == 1
    assert "Measured on day 2 on NVIDIA H200" in again and "### Failures by op" not in again
    assert conformance.parse_report(again).keys() == {"reference", "vulkan"}


def _misbehave(case, backend_name):
    if case.name == "hangs":
        time.sleep(600)
    if case.name == "crashes":
        os._exit(3)
    return conformance.Result(case.name, case.op, "passed")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker pool test patches the forked workers")
def test_a_crash_or_hang_never_stops_the_run(rng, monkeypatch):
    monkeypatch.setattr(conformance, "run_case", _misbehave)  # workers fork after this: they inherit it
    good = _cases(rng)[0]
    cases = [
        conformance.Case(n, "Op", good.model, good.data_sets, 1e-3, 1e-7) for n in ("a", "hangs", "b", "crashes", "c")
    ]
    start = time.monotonic()
    results = conformance.run_all(cases, "reference", jobs=2, timeout=2)
    assert time.monotonic() - start < 30
    status = {r.case: (r.status, r.detail) for r in results}
    assert status["hangs"][0] == "failed" and "timeout" in status["hangs"][1]
    assert status["crashes"][0] == "failed" and "crashed" in status["crashes"][1]
    assert all(status[n][0] == "passed" for n in "abc")


@pytest.mark.slow
def test_onnx_backend_test_runs_on_mnn():
    """onnx's own BackendTest harness, as ONNX Runtime runs it, on a few node cases."""
    import unittest

    import onnx.backend.test

    bt = onnx.backend.test.BackendTest(backend, __name__)
    bt.include(
        r"^test_(abs|relu|add_bcast|softmax_axis_0|conv_with_strides_padding|reshape_negative_dim|"
        r"slice_neg|lstm_defaults|gather_0|reduce_mean_default_axes_keepdims_example)_cpu$"
    )
    suite = unittest.TestSuite()
    for case in bt.test_cases.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, "w")).run(suite)
    ran = result.testsRun - len(result.skipped)
    assert ran == 10 and result.wasSuccessful(), (result.failures, result.errors)

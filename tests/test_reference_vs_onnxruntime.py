"""The oracle's oracle: every reference kernel against ONNX Runtime or onnx's ReferenceEvaluator.

For each op and each of its conformance samples, mnn_core.testing.onnx_oracle builds the equivalent
small ONNX model and runs it on ONNX Runtime's CPU provider (on onnx.reference where ORT lacks the op:
newer opsets, the preview training domain, sequences); the reference's outputs must match. Ops with no
ONNX counterpart (gradients, optimizer updates) are checked against PyTorch in tests/test_oracle_torch.py,
and tests/test_oracle_coverage.py fails on any op with neither.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402

from mnn_core.ops import all_schemas  # noqa: E402
from mnn_core.testing.onnx_oracle import OPSET, OracleSkip, _Model, assert_matches, oracle_outputs, skip_reason  # noqa: E402
from mnn_core.testing.torch_oracle import COVERS as TORCH_COVERS  # noqa: E402


def _cases():
    for op, schema in all_schemas().items():
        if schema.samples is None or op in TORCH_COVERS:  # no ONNX counterpart: tests/test_oracle_torch.py
            continue
        for i, sample in enumerate(schema.samples(np.random.default_rng(0))):
            yield pytest.param(op, i, sample, id=f"{op}-{i}")


@pytest.mark.parametrize("op, index, sample", list(_cases()))
def test_reference_matches_oracle(op, index, sample):
    reason = skip_reason(op, sample)
    if reason:
        pytest.skip(reason)
    schema = all_schemas()[op]
    expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
    try:
        got = oracle_outputs(op, sample, expected)
    except OracleSkip as exc:
        pytest.skip(str(exc))
    assert_matches(op, got, expected, f"{op} sample {index} [{sample.label}]: reference (ACTUAL) vs oracle (DESIRED)")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(
    "lo,hi", [(None, 1.0), (0.0, None), (math.nan, 1.0), (0.0, math.nan), (None, None), (2.0, 1.0)]
)
def test_clip_bounds_as_onnxruntime(dtype, lo, hi):
    """Absent bounds are the dtype's finite extremes (so an infinite input comes out finite), a NaN
    bound is no bound; the values include both infinities and NaN. (An explicit infinite bound is
    taken as absent: mnn's attribute cannot tell them apart, and ONNX Runtime keeps an infinite input there.)"""
    from mnn_core.ops import run_reference

    x = np.array([-np.inf, -70000.0, -1.0, 0.0, 0.5, 2.0, np.nan, 70000.0, np.inf], dtype)
    m = _Model()
    ins = ["x", "" if lo is None else m.const(lo, dtype), "" if hi is None else m.const(hi, dtype)]
    while ins[-1] == "":
        ins.pop()
    m.node("Clip", ins, ["y"])
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        m.nodes,
        "clip",
        [helper.make_tensor_value_info("x", kind, list(x.shape))],
        [helper.make_tensor_value_info("y", kind, list(x.shape))],
        m.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    got = run_reference("Clip", [x], attrs)[0]
    np.testing.assert_array_equal(got, want)

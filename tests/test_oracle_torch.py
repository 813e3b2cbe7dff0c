"""The training ops ONNX has no counterpart of (gradients, optimizer updates, the fused loss, batch-norm
training), each reference kernel against PyTorch: autograd on the forward op, a torch.optim step, torch's
own loss and batch statistics (mnn_core.testing.torch_oracle). Cases: the schemas' samples (what every
backend's conformance suite runs) and torch_samples' (odd and empty sizes, float64, wider geometries)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from mnn_core.graph.ir import TensorInfo  # noqa: E402
from mnn_core.ops import all_schemas  # noqa: E402
from mnn_core.testing.onnx_oracle import OracleSkip, assert_matches  # noqa: E402
from mnn_core.testing.torch_oracle import COVERS, oracle_outputs  # noqa: E402
from mnn_core.testing.torch_samples import torch_samples  # noqa: E402


def _cases():
    for op in sorted(COVERS):
        schema = all_schemas()[op]
        for i, sample in enumerate(schema.samples(np.random.default_rng(0)) if schema.samples else []):
            yield pytest.param(op, sample, id=f"{op}-schema-{i}")
        for i, sample in enumerate(torch_samples(op, np.random.default_rng(1))):
            yield pytest.param(op, sample, id=f"{op}-torch-{i}")


@pytest.mark.parametrize("op, sample", list(_cases()))
def test_reference_matches_torch(op, sample):
    schema = all_schemas()[op]
    attrs = schema.check_attrs(sample.attrs, op)
    infos = [None if x is None else TensorInfo(x.shape, str(x.dtype)) for x in sample.inputs]
    schema.infer(infos, attrs)  # a case the op's own shape rules accept
    expected = schema.reference(list(sample.inputs), attrs)
    try:
        got = oracle_outputs(op, sample.inputs, attrs)
    except OracleSkip as exc:
        pytest.skip(str(exc))
    assert_matches(op, got, expected, f"{op} [{sample.label}]: reference (ACTUAL) vs PyTorch (DESIRED)")


def test_every_covered_op_has_torch_samples():
    """Each op PyTorch judges gets cases beyond its schema's (the schemas' are small and float32)."""
    missing = [op for op in sorted(COVERS) if not torch_samples(op, np.random.default_rng(1))]
    assert not missing, f"no torch_samples for {missing}"

"""Samples of mnn_core.testing.onnx_samples judged by ONNX Runtime or onnx.reference: for the ops whose
schemas give none (they run eagerly, or make a value from nothing), and for the window ops beyond their
schemas' (the geometry backends share with the reference: SAME pads, rectangular dilations, deep K)."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from mnn_core.ops import all_schemas  # noqa: E402
from mnn_core.testing.onnx_oracle import assert_matches, oracle_outputs  # noqa: E402
from mnn_core.testing.onnx_samples import extra_samples, wider_samples  # noqa: E402


def _cases():
    for op, samples in extra_samples().items():
        for i, sample in enumerate(samples):
            yield pytest.param(op, sample, id=f"{op}-{i}")


@pytest.mark.parametrize("op, sample", list(_cases()))
def test_extra_sample_matches_oracle(op, sample):
    schema = all_schemas()[op]
    assert schema.samples is None, f"{op} has schema samples now: tests/test_reference_vs_onnxruntime.py runs them"
    expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
    got = oracle_outputs(op, sample, expected)
    assert_matches(op, got, expected, f"{op} [{sample.label}]: reference (ACTUAL) vs oracle (DESIRED)")


def _wider():
    for op, samples in wider_samples().items():
        for i, sample in enumerate(samples):
            yield pytest.param(op, sample, id=f"{op}-wide-{i}")


@pytest.mark.parametrize("op, sample", list(_wider()))
def test_wider_sample_matches_oracle(op, sample):
    schema = all_schemas()[op]
    expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
    got = oracle_outputs(op, sample, expected)
    assert_matches(op, got, expected, f"{op} [{sample.label}]: reference (ACTUAL) vs oracle (DESIRED)")

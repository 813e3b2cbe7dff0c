"""Every op the reference backend registers is compared somewhere in this suite with an implementation
that shares no code with it: ONNX Runtime or onnx.reference (mnn_core.testing.onnx_oracle, through
tests/test_reference_vs_onnxruntime.py and tests/test_oracle_extra.py) or PyTorch
(mnn_core.testing.torch_oracle, through tests/test_oracle_torch.py). The oracle modules declare what
they judge; this test reads the declarations and names any op judged only by the reference itself."""

from __future__ import annotations

import pytest

pytest.importorskip("onnx")

from mnn_core.backend.plugins import get_plugins  # noqa: E402
from mnn_core.testing import torch_oracle  # noqa: E402
from mnn_core.testing.onnx_oracle import covered_ops  # noqa: E402


def _registered() -> set[str]:
    return set(get_plugins().backends["reference"].kernels())


def test_every_reference_op_has_an_independent_oracle():
    judged = set(covered_ops()) | torch_oracle.COVERS
    missing = sorted(_registered() - judged)
    assert not missing, (
        f"{len(missing)} reference ops are compared with no independent implementation: "
        f"{', '.join(missing)}. Give each a sample ONNX Runtime / onnx.reference runs "
        "(mnn_core/testing/onnx_oracle.py, onnx_samples.py) or a PyTorch oracle (torch_oracle.py)."
    )


def test_declarations_name_registered_ops():
    """A declaration naming an op the reference does not register (renamed, removed) is stale."""
    stale = sorted((set(covered_ops()) | torch_oracle.COVERS) - _registered())
    assert not stale, f"oracle declarations name ops the reference backend does not register: {stale}"


def test_pytorch_judges_only_what_onnx_cannot():
    """PyTorch is the oracle of last resort (a heavier dependency): an op ONNX covers stays with ONNX."""
    both = sorted(set(covered_ops()) & torch_oracle.COVERS)
    assert not both, f"judged by both ONNX and PyTorch: {both}; drop them from torch_oracle.ORACLES"

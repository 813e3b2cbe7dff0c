"""ONNX Attention (opset 23) and GroupNormalization (opset 21), which mnn imports by inlining their ONNX
function bodies, run whole on Arm (fallback=False) and match ONNX Runtime: within 1e-4 of the output's
magnitude in fp32, the same bits at 3 threads as at 1, and within 1e-2 in the fp16 domain. The cases
(odd sizes, masks, causal, grouped-query heads, 3-D inputs, softcap, past key/value; GroupNormalization of
rank 3 to 5) are exported on the host by tools/onnx_function_ops.py, which tools/arm_rootfs_test.sh runs
when the host has onnx and onnxruntime, into the folder named by MNN_ARM_ONNX_OPS."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_arm

FOLDER = Path(os.environ.get("MNN_ARM_ONNX_OPS") or "/nonexistent")
CASES = sorted(p.stem for p in FOLDER.glob("*.mnn")) if FOLDER.is_dir() else []
needs_cases = pytest.mark.skipif(
    not CASES,
    reason="no exported cases: run under tools/arm_rootfs_test.sh on a host with onnx and onnxruntime "
    "(or set MNN_ARM_ONNX_OPS to the folder of tools/onnx_function_ops.py export)",
)


def _load(name):
    import mnn_core as mnn

    graph = mnn.load(str(FOLDER / f"{name}.mnn"))
    feeds = dict(np.load(FOLDER / f"{name}.npz"))
    want = dict(np.load(FOLDER / f"{name}.ort.npz"))
    return graph, feeds, want


def _run(graph, feeds, **kw):
    from mnn_core import Session

    sess = Session(graph, backend="arm", fallback=False, **kw)
    off = sorted({p.op for p in sess.plan if p.backend != "arm"})
    assert not off, f"ops off arm: {off}"
    return sess.run(dict(feeds))


@needs_arm
@needs_cases
@pytest.mark.parametrize("name", CASES or ["none"])
def test_runs_whole_on_arm_and_matches_onnxruntime(name):
    graph, feeds, want = _load(name)
    one = _run(graph, feeds)
    for key, ref in want.items():
        np.testing.assert_allclose(one[key], ref, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(ref).max())))
    three = _run(graph, feeds, threads=3)
    for key in want:
        assert np.array_equal(three[key], one[key]), f"{name}: {key} differs at 3 threads"


@needs_arm
@needs_cases
@pytest.mark.parametrize("name", CASES or ["none"])
def test_fp16_domain(name):
    from mnn_arm import paths

    if not paths.runnable("fp16"):
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    graph, feeds, want = _load(name)
    got = _run(graph, feeds, precision="low")
    for key, ref in want.items():
        np.testing.assert_allclose(got[key], ref, rtol=2e-2, atol=2e-2 * max(1.0, float(np.abs(ref).max())))

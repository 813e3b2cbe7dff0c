"""The backend is registered everywhere and says why it cannot run off Arm."""

from __future__ import annotations

from conftest import ON_ARM

from mnn_core.plugins import get_plugins


def test_registered_and_availability_explained():
    backend = get_plugins().backends.get("arm")
    assert backend is not None, "the 'arm' entry point of mnn-arm is not registered"
    verdict = backend.availability()
    if ON_ARM:
        assert verdict.available, verdict.reason
        assert {"fp32", "int8"} <= set(backend.devices()[0].extra["paths"])
    else:
        assert not verdict.available
        assert "needs an Arm (aarch64) CPU" in verdict.reason


def test_session_on_arm_off_arm_is_a_clear_error():
    if ON_ARM:
        return
    import numpy as np
    import pytest

    from mnn_core import GraphBuilder, Session
    from mnn_core.errors import MnnError

    g = GraphBuilder("relu")
    g.output(g.Relu(g.input("x", (2, 3))), "y")
    with pytest.raises(MnnError, match="needs an Arm"):
        Session(g.build(), backend="arm", fallback=False).run({"x": np.zeros((2, 3), np.float32)})


def test_every_kernel_unit_is_built_by_both_builds():
    """setup.py (pip) and tools/arm_rootfs_test.sh (qemu) compile the same C units: a unit missing from
    one of them links on one build and fails with undefined symbols on the other."""
    import re
    from pathlib import Path

    plugin = Path(__file__).resolve().parents[1]
    units = {p.stem for p in (plugin / "mnn_arm" / "csrc").glob("*.c")}
    setup = (plugin / "setup.py").read_text()
    in_setup = set(re.findall(r'"(\w+)\.c": ', setup)) | set(re.findall(r"\{CSRC\}/(\w+)\.c", setup))
    script = (plugin / "tools" / "arm_rootfs_test.sh").read_text()
    in_script = set(re.findall(r"\b(\w+):armv8", script))
    assert units == in_setup, f"setup.py: missing {units - in_setup}, extra {in_setup - units}"
    assert units == in_script, f"arm_rootfs_test.sh: missing {units - in_script}, extra {in_script - units}"

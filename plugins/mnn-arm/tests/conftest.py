"""Tests that need the compiled kernels run only on aarch64 (natively, or in the
arm64 root under qemu: tools/arm_rootfs_test.sh); elsewhere they skip with the reason."""

from __future__ import annotations

import platform

import pytest

ON_ARM = platform.machine().lower() in ("aarch64", "arm64")
needs_arm = pytest.mark.skipif(
    not ON_ARM,
    reason=f"needs an aarch64 CPU (this is {platform.machine()}); "
    "run plugins/mnn-arm/tools/arm_rootfs_test.sh for emulated aarch64",
)


def assert_arm_bit_exact(graph, feeds, label=""):
    """The whole graph planned on arm at 1 and 3 threads, every output equal to the reference backend's
    in dtype, shape and every bit; returns the reference's outputs."""
    import numpy as np

    from mnn_core import Session

    want = Session(graph, backend="reference").run(dict(feeds))
    for threads in (1, 3):
        sess = Session(graph, backend="arm", fallback=False, threads=threads)
        assert {p.backend for p in sess.plan} == {"arm"}, str(sess.plan)
        got = sess.run(dict(feeds))
        for key, ref in want.items():
            assert got[key].dtype == ref.dtype and got[key].shape == ref.shape, key
            np.testing.assert_array_equal(got[key], ref, err_msg=f"{label} {key} threads={threads}")
    return want


def pytest_configure(config):
    if ON_ARM:  # on x86 the arm suite is host-side tests only; arm_rootfs_test.sh runs it under qemu
        from mnn_core.testing import check_required

        check_required("arm")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run

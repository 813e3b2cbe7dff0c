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


def pytest_configure(config):
    if ON_ARM:  # on x86 the arm suite is host-side tests only; arm_rootfs_test.sh runs it under qemu
        from mnn_core.testing import check_required

        check_required("arm")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run

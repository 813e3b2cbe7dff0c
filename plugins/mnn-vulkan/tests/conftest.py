"""Vulkan test setup: the Khronos validation layer and device skips.

The validation layer (with synchronization validation) is switched on for the
whole run, before anything opens the loader, whenever it is installed; every
test then fails if the layer reported an error while it ran (the plugin's
debug-utils messenger counts them). Set MNN_VULKAN_VALIDATION=0 to run
without it.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

LAYER = "VK_LAYER_KHRONOS_validation"


def _layer_installed() -> bool:
    dirs = [
        "/usr/share/vulkan/explicit_layer.d",
        "/etc/vulkan/explicit_layer.d",
        "/usr/local/share/vulkan/explicit_layer.d",
    ]
    dirs += os.environ.get("VK_LAYER_PATH", "").split(":")
    return any(glob.glob(os.path.join(d, "*khronos_validation*.json")) for d in dirs if d)


if os.environ.get("MNN_VULKAN_VALIDATION", "") != "0" and _layer_installed():
    layers = [x for x in os.environ.get("VK_INSTANCE_LAYERS", "").split(":") if x]
    if LAYER not in layers:
        os.environ["VK_INSTANCE_LAYERS"] = ":".join(layers + [LAYER])
    # synchronization validation too: a missing barrier between dispatches is an error
    os.environ.setdefault("VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT")

from vulkan_testing import unavailable_reason  # noqa: E402  (after the environment is set)


@pytest.fixture(autouse=True)
def no_validation_errors():
    """Fail the test when the validation layer reported errors during it."""
    if unavailable_reason():
        yield
        return
    from mnn_vulkan import validation_errors

    _, before, _ = validation_errors()
    yield
    active, after, last = validation_errors()
    if active and after > before:
        pytest.fail(f"{after - before} Vulkan validation error(s); last: {last}")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def pytest_configure(config):
    from mnn_core.testing import check_required

    check_required("vulkan")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run, not skips it

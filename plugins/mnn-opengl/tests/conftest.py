from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def pytest_configure(config):
    from mnn_core.testing import check_required

    check_required("opengl")  # MNN_REQUIRE_BACKENDS (CI): an unavailable backend fails the run, not skips it

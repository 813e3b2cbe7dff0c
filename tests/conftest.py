"""Shared fixtures: small graphs built with the graph builder, and backends
registered for a test only (real backends of ours, not mocks)."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.plugins import get_plugins


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def register_backend():
    """Register a backend object for one test, then remove it again."""
    plugins = get_plugins()
    added = []

    def add(backend):
        plugins.backends[backend.name] = backend
        plugins.backend_plugin[backend.name] = plugins.records[0]
        added.append(backend.name)
        return backend

    yield add
    for name in added:
        plugins.backends.pop(name, None)
        plugins.backend_plugin.pop(name, None)

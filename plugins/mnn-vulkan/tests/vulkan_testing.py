"""Helpers shared by the mnn-vulkan tests (conftest.py sets up the environment first)."""

from __future__ import annotations

import pytest

from mnn_core.plugins import get_plugins


def vulkan_backend():
    return get_plugins().backends.get("vulkan")


def unavailable_reason() -> str:
    backend = vulkan_backend()
    if backend is None:
        record = next((r for r in get_plugins().records if r.name == "vulkan"), None)
        return f"mnn-vulkan is not loaded ({record.error if record else 'not installed'})"
    avail = backend.availability()
    return "" if avail else avail.reason


needs_vulkan = pytest.mark.skipif(bool(unavailable_reason()), reason=f"no Vulkan device: {unavailable_reason()}")

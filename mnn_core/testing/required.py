"""MNN_REQUIRE_BACKENDS: the backends a test run must find available (CI sets it).

Without it, a backend whose driver is missing makes its suite skip nearly everything and
pass. With `MNN_REQUIRE_BACKENDS=x86,vulkan`, a plugin's conftest calling
`check_required("vulkan")` ends the run at once, naming the backend and why it is unavailable.
"""

from __future__ import annotations

import os

ENV = "MNN_REQUIRE_BACKENDS"


def required() -> set[str]:
    # commas or spaces: qemu's -E splits its argument at commas, so the arm runner passes spaces
    return set(os.environ.get(ENV, "").replace(",", " ").split())


def unavailable_reason(name: str) -> str:
    """Why backend `name` cannot run here, or "" when it can."""
    from ..backend.plugins import get_plugins

    plugins = get_plugins()
    backend = plugins.backends.get(name)
    if backend is None:
        failed = [f"{r.name}: {r.error}" for r in plugins.records if r.error and r.name == name]
        return f"its plugin failed ({failed[0]})" if failed else "it is not installed"
    availability = backend.availability()
    return "" if availability else availability.reason


def check_required(name: str) -> None:
    """End the pytest run (exit status 3) if `name` is required here and unavailable."""
    if name not in required():
        return
    reason = unavailable_reason(name)
    if reason:
        import pytest

        pytest.exit(f"backend {name!r} is required ({ENV}={os.environ[ENV]}) but unavailable: {reason}", returncode=3)

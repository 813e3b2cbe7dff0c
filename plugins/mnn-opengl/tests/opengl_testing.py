"""Shared skips for the OpenGL tests: whether a headless OpenGL compute context opens here."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def unavailable_reason() -> str:
    from mnn_opengl import device

    return device.unavailable_reason()


needs_opengl = pytest.mark.skipif(bool(unavailable_reason()), reason=f"OpenGL unavailable: {unavailable_reason()}")

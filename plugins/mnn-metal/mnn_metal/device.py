"""Whether Metal runs here, and why not: decided without touching anything Metal off macOS."""

from __future__ import annotations

import platform
import sys


def unavailable_reason() -> str:
    """Empty when a Metal device is usable; else one line saying what is missing."""
    if sys.platform != "darwin":
        return f"Metal needs macOS; this is {platform.system() or sys.platform}"
    try:
        from . import _metal
    except ImportError as exc:
        return (
            f"the native part mnn_metal._metal is not built ({exc}); reinstall mnn-metal on macOS "
            "with the Xcode command-line tools (xcode-select --install)"
        )
    if not _metal.device_name():
        return "no Metal device on this Mac (MTLCreateSystemDefaultDevice returned nil)"
    return ""


def device_name() -> str:
    from . import _metal

    return _metal.device_name()

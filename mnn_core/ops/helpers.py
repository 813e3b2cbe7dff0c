"""Shape helpers of the op schemas that backends use too. Plugins import these from here: the
module they live in (ops/_util.py) is the op families' private one."""

from __future__ import annotations

from ._util import broadcast_shape, normalize_axis

__all__ = ["broadcast_shape", "normalize_axis"]

"""What a segment recorder computes the same on every API: grids of work groups."""

from __future__ import annotations

MAX_GROUPS = 65535  # the minimum maxComputeWorkGroupCount Vulkan guarantees; flat_index() keeps x below it
MAX_ELEMENTS = (1 << 31) - 1  # shaders index with 32-bit integers


def linear_groups(total: int, local: int) -> tuple[int, int, int]:
    """A 2-D grid of 1-D work groups covering `total` invocations (the shaders' flat_index())."""
    n = -(-total // local)
    gx = min(n, MAX_GROUPS)
    return (gx, -(-n // gx) if n else 0, 1)


def row_groups(rows: int) -> tuple[int, int, int]:
    """One work group per row, on a 2-D grid."""
    gx = min(rows, MAX_GROUPS)
    return (gx, -(-rows // gx) if rows else 0, 1)

"""Weights a backend packs at prepare: how to tell the array it packed before is still the same."""

from __future__ import annotations

import zlib

import numpy as np


def checksum(arr: np.ndarray) -> int:
    """CRC-32 of an array's bytes (about 2 GB/s): a weight changed since it was released or packed."""
    return zlib.crc32(memoryview(np.ascontiguousarray(arr)).cast("B"))

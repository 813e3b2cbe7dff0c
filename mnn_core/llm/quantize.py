"""Weight-only quantization of the decoder's projections: int8 or int4, group-wise along the input
dimension, symmetric or asymmetric (a zero point per group).

A [K, N] weight becomes q [K, N] (int8 storage; int4 values lie in [-8, 7]), scales
[ceil(K / group), N] and, asymmetric, zero points of the same shape, read by a blocked
DequantizeLinear (axis 0, block_size = group) in front of the MatMul. Embeddings and the output
head stay float, as their rows are gathered or their errors reach every logit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MnnError


@dataclass(frozen=True)
class WeightQuant:
    bits: int = 8
    group: int = 64
    symmetric: bool = True

    def __post_init__(self):
        if self.bits not in (4, 8):
            raise MnnError(f"weight bits must be 4 or 8, got {self.bits}")
        if self.group not in (32, 64, 128, 256):
            raise MnnError(f"group must be 32, 64, 128 or 256, got {self.group}")

    @classmethod
    def parse(cls, text: str | None, group: int = 64, symmetric: bool = True) -> WeightQuant | None:
        """ "fp32" (or None) -> None; "int8" / "int4" -> that quantization."""
        if text in (None, "fp32", "float32"):
            return None
        if text not in ("int8", "int4"):
            raise MnnError(f"weights must be fp32, int8 or int4, got {text!r}")
        return cls(int(text[3:]), group, symmetric)

    def quantize(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(q, scales, zero points or None) of a [K, N] float weight."""
        k, n = w.shape
        blocks = -(-k // self.group)
        padded = np.zeros((blocks * self.group, n), np.float32)
        padded[:k] = w
        grouped = padded.reshape(blocks, self.group, n)
        qmin, qmax = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        if self.symmetric:
            scale = np.abs(grouped).max(axis=1) / qmax
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            q = np.clip(np.rint(grouped / scale[:, None]), qmin, qmax)
            zero = None
        else:
            lo, hi = np.minimum(grouped.min(axis=1), 0), np.maximum(grouped.max(axis=1), 0)
            scale = ((hi - lo) / (qmax - qmin)).astype(np.float32)
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            zero = np.clip(np.rint(qmin - lo / scale), qmin, qmax)
            q = np.clip(np.rint(grouped / scale[:, None]) + zero[:, None], qmin, qmax)
            zero = zero.astype(np.int8)
        return q.reshape(-1, n)[:k].astype(np.int8), scale, zero

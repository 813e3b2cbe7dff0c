"""Weight-only quantization of the decoder: int8 or int4, group-wise along the input dimension,
symmetric or asymmetric (a zero point per group), stored as MatMulNBits operands (mnn_core/ops/
matmul_nbits.py, ONNX Runtime's contract) that backends multiply without unpacking them.

A projection's HF weight [N, K] (a row per output) becomes B [N, blocks, group * bits / 8] uint8
(4-bit values two per byte, the even element low), scales [N, blocks] and, asymmetric, zero points
[N, ceil(blocks * bits / 8)] uint8; symmetric weights take MatMulNBits' default zero point 2^(bits-1).

The output head is quantized too (8 bits by default, `head_bits`): at decode it is the largest single
read (vocabulary x hidden), so a float head would set the speed. A tied embedding then gathers its rows
from the quantized head (dequantized after the Gather), so the float table is not kept at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MnnError
from ..ops.matmul_nbits import ACCURACY_INT8

#: rows of a 1024-wide weight quantized at a time (a few MB of float temporaries)
ROWS_PER_SLICE = 2048


@dataclass(frozen=True)
class WeightQuant:
    bits: int = 8
    group: int = 64
    symmetric: bool = True
    #: bits of the output head (and the embedding gathered from it when tied); None keeps it float
    head_bits: int | None = 8
    #: activations rounded to int8 per group in the products (MatMulNBits accuracy_level 4): the
    #: integer dot-product instructions; False multiplies in float (exactly the quantized model)
    int8_compute: bool = True

    def __post_init__(self):
        for what, bits in (("weight", self.bits), ("head", self.head_bits or 8)):
            if bits not in (4, 8):
                raise MnnError(f"{what} bits must be 4 or 8, got {bits}")
        if self.group not in (32, 64, 128, 256):
            raise MnnError(f"group must be 32, 64, 128 or 256, got {self.group}")

    @classmethod
    def parse(cls, text: str | None, group: int = 64, symmetric: bool = True, **kw) -> WeightQuant | None:
        """ "fp32" (or None) -> None; "int8" / "int4" -> that quantization (kw: head_bits, int8_compute)."""
        if text in (None, "fp32", "float32"):
            return None
        if text not in ("int8", "int4"):
            raise MnnError(f"weights must be fp32, int8 or int4, got {text!r}")
        return cls(int(text[3:]), group, symmetric, **kw)

    @property
    def accuracy_level(self) -> int:
        return ACCURACY_INT8 if self.int8_compute else 0

    def pack(self, w: np.ndarray, bits: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(B, scales, zero points or None) of an [N, K] float weight, at `bits` (default self.bits).
        Rows go a slice at a time, so the float temporaries stay small next to a vocabulary-sized head."""
        step = rows_per_slice(w.shape[1])
        return self.pack_slices((w[i : i + step] for i in range(0, w.shape[0], step)), w.shape, bits)

    def pack_slices(
        self, slices, shape: tuple[int, int], bits: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """pack() of the [N, K] weight whose rows come as these slices, in order (read as they are
        needed), each written into the outputs as it comes: the packed weight is held once."""
        bits = bits or self.bits
        n, k = shape
        blocks = -(-k // self.group)
        b = np.empty((n, blocks, -(-self.group * bits // 8)), np.uint8)
        scale = np.empty((n, blocks), np.float32)
        zero = None if self.symmetric else np.empty((n, -(-blocks * bits // 8)), np.uint8)
        lo = 0
        for w in slices:
            hi = lo + len(w)
            if hi > n:
                raise MnnError(f"the weight's slices hold more than its {n} rows")
            part = self._pack_rows(np.asarray(w, np.float32), bits)
            b[lo:hi], scale[lo:hi] = part[0], part[1]
            if zero is not None:
                zero[lo:hi] = part[2]
            lo = hi
        if lo != n:
            raise MnnError(f"the weight's slices hold {lo} of its {n} rows")
        return b, scale, zero

    def _pack_rows(self, w: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        n, k = w.shape
        blocks = -(-k // self.group)
        if blocks * self.group != k:
            w = np.concatenate([w, np.zeros((n, blocks * self.group - k), np.float32)], axis=1)
        grouped = w.reshape(n, blocks, self.group)
        top = (1 << bits) - 1
        if self.symmetric:
            half = 1 << (bits - 1)
            scale = _reduce_groups(np.abs(grouped), np.maximum) / (half - 1)
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            q = grouped / scale[:, :, None]  # rounded, clipped and offset in place: one float temporary
            np.clip(np.rint(q, out=q), -half, half - 1, out=q)
            q += half
            zero = None
        else:
            lo = np.minimum(_reduce_groups(grouped, np.minimum), 0)
            hi = np.maximum(_reduce_groups(grouped, np.maximum), 0)
            scale = ((hi - lo) / top).astype(np.float32)
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            zero = np.clip(np.rint(-lo / scale), 0, top)
            q = grouped / scale[:, :, None]
            np.rint(q, out=q)
            q += zero[:, :, None]
            np.clip(q, 0, top, out=q)
            zero = _pack_rows(zero.astype(np.uint8), bits)
        b = _pack_rows(q.astype(np.uint8).reshape(n * blocks, self.group), bits).reshape(n, blocks, -1)
        return b, scale, zero


def rows_per_slice(width: int) -> int:
    """Rows of a weight `width` wide quantized at a time."""
    return max(1, ROWS_PER_SLICE * 1024 // max(1, width))


def _reduce_groups(x: np.ndarray, op) -> np.ndarray:
    """op (np.maximum or np.minimum) over the last axis (a power of two long), halving it each step:
    numpy reduces a short last axis a call per group, several times slower than these whole-array ops."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        x = op(x[..., :half], x[..., half:])
    return x[..., 0]


def _pack_rows(q: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned values [rows, count] as bytes: 8-bit as they are, 4-bit two per byte (even one low)."""
    if bits == 8:
        return np.ascontiguousarray(q)
    if q.shape[1] % 2:
        q = np.concatenate([q, np.zeros((q.shape[0], 1), np.uint8)], axis=1)
    # each pair as one little-endian uint16 (even value in the low byte): its low byte after v | v >> 4
    # holds both nibbles, in contiguous passes rather than strided ones
    pairs = np.ascontiguousarray(q).view(np.uint16)
    return (pairs | (pairs >> 4)).astype(np.uint8)

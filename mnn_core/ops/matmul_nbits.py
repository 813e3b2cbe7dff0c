"""MatMulNBits: a MatMul whose weight stays quantized (ONNX Runtime's com.microsoft contrib op, whose
contract this follows so that ONNX Runtime can judge it).

    Y [..., N] = A [..., K] @ dequant(B)^T (+ bias)

B [N, n_blocks, block_size * bits / 8] uint8 holds each output column's K weights in blocks of
`block_size` along K (the last block zero-padded), 4-bit values two per byte (the even element in
the low nibble). Each block has a float scale (scales [N, n_blocks] or flat) and an unsigned zero point
(zero_points uint8, 4-bit ones two per byte along the blocks of a column, [N, ceil(n_blocks * bits / 8)]
or flat), 2^(bits-1) when absent: w = (q - zero) * scale.

`accuracy_level` 4 lets a kernel multiply in int8 (A quantized per block, as ONNX Runtime does); the
reference computes in float64 at every level.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

#: accuracy_level at which kernels may quantize A to int8 per block (ONNX Runtime's "int8 compute")
ACCURACY_INT8 = 4


def nbits_layout(k: int, bits: int, block: int) -> tuple[int, int]:
    """(n_blocks, bytes per block) of a column of K weights."""
    return -(-k // block), block * bits // 8


def _check(ins, attrs) -> None:
    k, n, bits, block = attrs["K"], attrs["N"], attrs["bits"], attrs["block_size"]
    if block < 16 or block & (block - 1):
        raise GraphError(f"MatMulNBits: block_size must be a power of two of at least 16, got {block}")
    a, b, scales = ins[0], ins[1], ins[2]
    nb, blob = nbits_layout(k, bits, block)
    if not a.shape or a.shape[-1] != k:
        raise GraphError(f"MatMulNBits: A's last dimension must be K={k}, got shape {a.shape}")
    if b.dtype != "uint8" or tuple(b.shape) != (n, nb, blob):
        raise GraphError(f"MatMulNBits: B must be uint8 [{n}, {nb}, {blob}], got {b.dtype} {b.shape}")
    if scales.dtype != a.dtype or tuple(scales.shape) not in ((n * nb,), (n, nb)):
        raise GraphError(f"MatMulNBits: scales must be {a.dtype} [{n}, {nb}] (or flat), got {scales.shape}")
    zp = ins[3] if len(ins) > 3 else None
    zb = -(-nb * bits // 8)
    if zp is not None and (zp.dtype != "uint8" or tuple(zp.shape) not in ((n * zb,), (n, zb))):
        raise GraphError(f"MatMulNBits: zero_points must be uint8 [{n}, {zb}] (or flat), got {zp.dtype} {zp.shape}")
    if len(ins) > 4 and ins[4] is not None:
        raise GraphError("MatMulNBits: g_idx (act-order) is not supported; quantize with blocks in K order")
    bias = ins[5] if len(ins) > 5 else None
    if bias is not None and tuple(bias.shape) != (n,):
        raise GraphError(f"MatMulNBits: bias must be [{n}], got {bias.shape}")


def _infer(ins, attrs):
    _check(ins, attrs)
    return [TensorInfo(tuple(ins[0].shape[:-1]) + (attrs["N"],), ins[0].dtype)]


def unpack_nbits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first `count` unsigned values of each row of `packed` (uint8 [rows, bytes])."""
    if bits == 8:
        return packed[:, :count].astype(np.int32)
    out = np.empty((packed.shape[0], packed.shape[1] * 2), np.int32)
    out[:, 0::2], out[:, 1::2] = packed & 0x0F, packed >> 4
    return out[:, :count]


def dequantize_nbits(b, scales, zero_points, k: int, n: int, bits: int, block: int) -> np.ndarray:
    """The float64 weight [N, K] that B, its scales and zero points stand for."""
    nb, _ = nbits_layout(k, bits, block)
    q = unpack_nbits(b.reshape(n * nb, -1), bits, block).reshape(n, nb, block)
    if zero_points is None:
        zero = np.full((n, nb), 1 << (bits - 1), np.int32)
    else:
        zero = unpack_nbits(zero_points.reshape(n, -1), bits, nb)
    w = (q - zero[:, :, None]) * scales.reshape(n, nb, 1).astype(np.float64)
    return w.reshape(n, nb * block)[:, :k]


def _reference(ins, attrs):
    a, b, scales = ins[:3]
    zp = ins[3] if len(ins) > 3 else None
    bias = ins[5] if len(ins) > 5 else None
    k, n = attrs["K"], attrs["N"]
    w = dequantize_nbits(b, scales, zp, k, n, attrs["bits"], attrs["block_size"])
    y = a.astype(np.float64) @ w.T
    if bias is not None:
        y = y + bias
    return [y.astype(a.dtype)]


def _flops(ins, outs, attrs):
    return 2.0 * outs[0].size * attrs["K"]


def random_nbits(rng, k: int, n: int, bits: int, block: int, zero_points: bool) -> list[np.ndarray]:
    """Random B, scales and (or None) zero points of a [K, N] weight, the padding of the last block too."""
    nb, blob = nbits_layout(k, bits, block)
    b = rng.integers(0, 256, (n, nb, blob)).astype(np.uint8)
    scales = rand(rng, n, nb, low=0.005, high=0.05)
    zp = rng.integers(0, 256, (n, -(-nb * bits // 8))).astype(np.uint8) if zero_points else None
    return [b, scales, zp]


def _samples(rng):
    for m, k, n, bits, block, zp, bias in (
        ((1, 64), 64, 5, 4, 32, False, False),
        ((3, 50), 50, 7, 4, 16, True, True),  # a partial block, odd N and zero-point count
        ((2, 1, 96), 96, 9, 8, 32, True, False),
        ((5, 130), 130, 3, 8, 64, False, True),
        ((1, 200), 200, 11, 4, 128, True, False),
    ):
        b, scales, zero = random_nbits(rng, k, n, bits, block, zp)
        ins = [rand(rng, *m), b, scales]
        if zp or bias:
            ins.append(zero if zp else None)
        if bias:
            ins += [None, rand(rng, n)]
        yield Sample(ins, {"K": k, "N": n, "bits": bits, "block_size": block}, f"{bits}b blk{block} K{k} N{n}")


register(
    OpSchema(
        "MatMulNBits",
        infer=_infer,
        reference=_reference,
        attrs={
            "K": Attr("int"),
            "N": Attr("int"),
            "bits": Attr("int", 4, choices=(4, 8)),
            "block_size": Attr("int"),
            "accuracy_level": Attr("int", 0, choices=(0, 1, 2, 3, 4)),
        },
        n_inputs=(3, 6),
        flops=_flops,
        samples=_samples,
        doc="MatMul by a block-quantized 4- or 8-bit weight (ONNX Runtime's com.microsoft MatMulNBits): "
        "B [N, blocks, bytes] uint8, a scale and an unsigned zero point (default 2^(bits-1)) per block of K.",
    )
)

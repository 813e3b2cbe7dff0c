"""Quantization parameters: activation scale/zero point, per-channel weights, int32 bias.

Activations are uint8, asymmetric: the calibrated range [lo, hi] is widened to hold 0
(so zero padding and ReLU's zero are exact), scale = (hi - lo) / 255 and
zero_point = rint(-lo / scale). Weights are int8, symmetric, in [-127, 127] (so -w is
representable and an int8 kernel never meets -128 * -128), one scale per output
channel (axis 0 of a Conv weight [M, C, kh, kw] or of a Linear weight [M, K]) or one
per tensor. Bias is int32 in units of x_scale * w_scale[c], zero point 0.
All of it is written down in docs/QUANT.md.
"""

from __future__ import annotations

import numpy as np

from ..errors import MnnError

ACT_DTYPE = "uint8"
ACT_QMIN, ACT_QMAX = 0, 255
W_QMAX = 127
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def activation_params(lo: float, hi: float) -> tuple[np.float32, np.uint8]:
    """uint8 scale and zero point for values in [lo, hi] (widened to hold 0)."""
    lo, hi = float(lo), float(hi)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise MnnError(f"activation range [{lo}, {hi}] is not finite; the calibration data produced inf or nan")
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-12:  # a constant-zero tensor: any scale represents it; 1 keeps multipliers finite
        return np.float32(1.0), np.uint8(0)
    scale = np.float32((hi - lo) / (ACT_QMAX - ACT_QMIN))
    zp = int(np.clip(np.rint(-lo / float(scale)), ACT_QMIN, ACT_QMAX))
    return scale, np.uint8(zp)


def weight_scales(w: np.ndarray, per_channel: bool) -> np.ndarray:
    """Symmetric int8 scales: max|w| / 127 per output channel (axis 0) or for the whole tensor.

    An all-zero channel gets scale 1 (its values quantize to 0 either way), so that
    requantization multipliers stay finite."""
    w = np.asarray(w, np.float32)
    amax = np.abs(w.reshape(w.shape[0], -1)).max(axis=1) if per_channel else np.array(np.abs(w).max())
    scale = (amax / np.float32(W_QMAX)).astype(np.float32)
    return np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)


def quantize_weight(w: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """q = clip(rint(float32(w / scale)), -127, 127) with scale per axis 0 (or a scalar)."""
    w = np.asarray(w, np.float32)
    s = scale.reshape((-1,) + (1,) * (w.ndim - 1)) if scale.ndim else scale
    return np.clip(np.rint(w / s), -W_QMAX, W_QMAX).astype(np.int8)


def quantize_bias(b: np.ndarray, x_scale: np.float32, w_scale: np.ndarray) -> np.ndarray:
    """int32 bias in units of x_scale * w_scale[c] (the accumulator's units), saturated to int32."""
    unit = (np.float32(x_scale) * w_scale.astype(np.float32)).astype(np.float64)
    q = np.rint(np.asarray(b, np.float64) / unit)
    return np.clip(q, INT32_MIN, INT32_MAX).astype(np.int32)


def fake_quant_activation(x: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """QuantizeLinear then DequantizeLinear with the uint8 params of [lo, hi], as the int8 model computes them.

    Returns (values, mask): mask is 1 where x was inside the representable range (the straight-through
    estimator passes gradients there) and 0 where it saturated."""
    scale, zp = activation_params(lo, hi)
    q = np.rint(x.astype(np.float32) / scale) + np.float32(zp)
    mask = ((q >= ACT_QMIN) & (q <= ACT_QMAX)).astype(x.dtype)
    q = np.clip(q, ACT_QMIN, ACT_QMAX)
    return ((q - np.float32(zp)) * scale).astype(x.dtype), mask


def fake_quant_weight(w: np.ndarray, per_channel: bool) -> np.ndarray:
    """The float weight an int8 model holds: quantize_weight then multiply back."""
    scale = weight_scales(w, per_channel)
    q = quantize_weight(w, scale).astype(np.float32)
    s = scale.reshape((-1,) + (1,) * (w.ndim - 1)) if scale.ndim else scale
    return (q * s).astype(w.dtype)

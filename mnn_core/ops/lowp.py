"""Conversions into and out of the low-precision dtypes (bfloat16, float8, float4, int4/int2).

numpy holds these through ml_dtypes; its `astype` rounds to nearest even and,
for the float8 formats without infinities, turns out-of-range values into NaN.
ONNX's Cast adds two choices on top, which live here:

- `saturate` (the default): a finite value beyond the target's range, and an
  infinity, become the largest finite value of that sign instead;
- float8_e8m0fnu (a power of two, no mantissa) rounds by `round_mode`:
  "up" (the default: the next power of two), "down" or "nearest".
"""

from __future__ import annotations

import numpy as np

from ..graph.ir import LOW_PRECISION_DTYPES, numpy_dtype

#: float formats that saturation applies to (it changes nothing for the integer and wide formats)
SATURATING = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn")
ROUND_MODES = ("up", "down", "nearest")
_E8M0_MIN_EXP, _E8M0_MAX_EXP = -127, 127


def is_low_precision(dtype) -> bool:
    return (dtype if isinstance(dtype, str) else np.dtype(dtype).name) in LOW_PRECISION_DTYPES


def cast(x: np.ndarray, to: str, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """x converted to dtype `to` with ONNX Cast semantics (floats to ints truncate toward zero)."""
    x = np.asarray(x)
    src, target = x.dtype.name, numpy_dtype(to)
    if to == "float8_e8m0fnu":
        return _to_e8m0(x.astype(np.float32), saturate, round_mode)
    if src in LOW_PRECISION_DTYPES and to not in LOW_PRECISION_DTYPES:
        x = x.astype(np.float32) if src not in ("int4", "uint4", "int2", "uint2") else x.astype(np.int8)
        if to in ("int4", "uint4", "int2", "uint2"):
            return x.astype(to)
    if to in SATURATING and saturate and x.dtype.kind in "fV":
        x = x.astype(np.float32)
        top = float(_finfo_max(to))
        x = np.where(np.isnan(x), x, np.clip(x, -top, top))
    elif target.kind in "iu" and not is_low_precision(to) and x.dtype.kind == "f":
        x = np.trunc(x)
    return x.astype(target)


def _finfo_max(dtype: str):
    import ml_dtypes

    return ml_dtypes.finfo(dtype).max


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """Powers of two 2**e, e in [-127, 127], stored as the biased exponent byte (0xFF: NaN)."""
    if round_mode not in ROUND_MODES:
        raise ValueError(f"round_mode must be one of {', '.join(ROUND_MODES)}, got {round_mode!r}")
    mag = np.abs(x.astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log2(np.where(mag > 0, mag, np.finfo(np.float64).tiny))
    if round_mode == "up":
        exp = np.ceil(log)
    elif round_mode == "down":
        exp = np.floor(log)
    else:  # nearest in linear terms: the midpoint between 2**e and 2**(e+1) is 1.5 * 2**e
        low = np.floor(log)
        exp = np.where(mag >= 1.5 * np.exp2(low), low + 1, low)
    too_big = exp > _E8M0_MAX_EXP
    exp = np.clip(exp, _E8M0_MIN_EXP, _E8M0_MAX_EXP)
    code = (exp + 127).astype(np.uint8)
    bad = np.isnan(x) | (~saturate & (too_big | np.isinf(x)))
    code = np.where(bad, np.uint8(0xFF), code)
    return code.view(np.dtype("float8_e8m0fnu")).reshape(x.shape)


#: ops whose kernels read the exact low-precision dtype (they must not see it widened)
EXACT_DTYPE_OPS = frozenset({"Cast", "BitCast", "QuantizeLinear", "DequantizeLinear", "Shape", "Size"})


def widen(dtype: np.dtype) -> np.dtype | None:
    """The numpy dtype a kernel computes a low-precision dtype in (None: not low precision)."""
    name = np.dtype(dtype).name
    if name not in LOW_PRECISION_DTYPES:
        return None
    if name in ("int4", "int2"):
        return np.dtype(np.int8)
    if name in ("uint4", "uint2"):
        return np.dtype(np.uint8)
    return np.dtype(np.float32)


def run_widened(op: str, kernel, inputs: list, attrs: dict) -> list:
    """Run a numpy kernel on inputs of low-precision dtypes: it computes in float32 (int8 for the
    sub-byte ints), as numpy has no arithmetic of its own for them, and results come back in the
    low-precision dtype. Kernels that must see the exact dtype run as they are."""
    narrow = next((a.dtype for a in inputs if isinstance(a, np.ndarray) and widen(a.dtype) is not None), None)
    if narrow is None or op in EXACT_DTYPE_OPS:
        return kernel(inputs, attrs)
    wide = [a.astype(widen(a.dtype)) if isinstance(a, np.ndarray) and widen(a.dtype) is not None else a for a in inputs]
    results = kernel(wide, attrs)
    return [np.asarray(r).astype(narrow) if np.asarray(r).dtype == widen(narrow) else r for r in results]

"""One table of comparison tolerances, by (op, dtype, precision).

    rtol, atol = tolerance("Conv", "float32", "bf16")

`precision` is the arithmetic the kernel really does: "oracle" (the reference against ONNX
Runtime), "fp32" (also for float64 and float16 tensors computed in their own type), or "bf16" /
"fp16" where a backend rounds operands to that format (x86's precision="low" GEMMs, GPU
half-precision shaders). `kernel_precision` picks it from the ops a backend runs reduced, so that an
fp32 kernel under a low-precision session is held to fp32. Used by the oracles (onnx_oracle,
torch_oracle); BackendConformance classes still set one rtol/atol per class.
"""

from __future__ import annotations

import numpy as np

#: (op or "*", dtype, precision) -> (rtol, atol). Looked up op-specific first, then "*".
TOLERANCES: dict[tuple[str, str, str], tuple[float, float]] = {
    # fp32 kernels against the float64-accumulating reference: rounding of sums of up to ~10^4 terms
    ("*", "float32", "fp32"): (1e-4, 1e-5),
    ("*", "float64", "fp32"): (1e-9, 1e-12),
    # float16 tensors: one float16 ulp (2^-10 relative) from rounding at different steps
    ("*", "float16", "fp32"): (1e-3, 1e-3),
    ("*", "float16", "fp16"): (2e-3, 2e-3),
    # bf16 operands (8-bit significands, each product within 2^-8 relative): a dot product of K terms
    # of mixed sign loses up to a few 2^-8 of its largest term. Conv samples need 2e-2 (measured).
    ("*", "float32", "bf16"): (3e-2, 3e-2),
    # fp16 operands and accumulation (GPU half shaders): 2^-11 per product, sums of up to ~600 terms
    ("*", "float32", "fp16"): (1e-2, 1e-2),
    ("*", "float16", "bf16"): (3e-2, 3e-2),
    # the reference against an independent implementation (ONNX Runtime, onnx.reference): both in full
    # precision, the reference accumulating in float64, ONNX Runtime in float32
    ("*", "float32", "oracle"): (1e-5, 1e-5),
    ("*", "float64", "oracle"): (1e-7, 1e-9),
    ("*", "float16", "oracle"): (1e-3, 1e-3),
    # transcendental ops on GPUs' native fp32 functions (a few ulp, not correctly rounded)
    ("Erf", "float32", "fp32"): (1e-4, 2e-5),
}

#: integer outputs that may differ by one step from rounding a float intermediate (ONNX Runtime's
#: QLinearAdd requantizes through a float32 lookup, the reference through float64)
INTEGER_STEPS: dict[str, int] = {"QLinearAdd": 1, "QLinearMul": 1}


def _is_float(dtype) -> bool:
    if str(dtype) in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return True
    try:
        return bool(np.issubdtype(np.dtype(dtype), np.floating))
    except TypeError:  # a dtype name numpy does not know
        return False


def tolerance(op: str, dtype: str, precision: str = "fp32") -> tuple[float, float]:
    """(rtol, atol) for comparing `op`'s `dtype` output computed at `precision`; (0, 0) for exact types."""
    if not _is_float(dtype):
        return (0.0, float(INTEGER_STEPS.get(op, 0)))
    dtype = str(dtype)
    for key in ((op, dtype, precision), ("*", dtype, precision), ("*", dtype, "fp32")):
        if key in TOLERANCES:
            return TOLERANCES[key]
    return TOLERANCES.get(("*", "float32", precision), TOLERANCES[("*", "float32", "fp32")])


def kernel_precision(op: str, session_precision: str, low_ops: frozenset | None, low_format: str) -> str:
    """The arithmetic `op` really runs at: `low_format` only where the session asks for low precision and the
    backend declares the op reduced (None: every op, for backends that lower the whole graph)."""
    if session_precision != "low":
        return "fp32"
    return low_format if low_ops is None or op in low_ops else "fp32"

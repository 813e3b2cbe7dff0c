"""The fused activations, as the codes every backend's kernels switch on.

The core's fuse_activations pass sets a Conv/Gemm/MatMul's (or a binary op's) `activation`
attribute to one of mnn_core.ops.elementwise.ACTIVATIONS, with `act_alpha` and `act_beta`. The codes
mirror `enum mnn_activation` in include/mnn_core/abi.h, which C kernels use directly (mnn-x86's
and mnn-arm's epilogues; mnn-opencl's common.cl gets them as activation_defines(); the shaders' act.glsl
numbers them alike); tests/test_backend_kit.py checks the lists agree.
"""

from __future__ import annotations

from collections.abc import Mapping

#: enum mnn_activation in abi.h: the fused-activation name -> its code
ACT_CODES = {
    "none": 0,
    "relu": 1,
    "clip": 2,
    "leaky_relu": 3,
    "sigmoid": 4,
    "silu": 5,
    "gelu": 6,
    "tanh": 7,
    "hard_sigmoid": 8,
    "hard_swish": 9,
}


#: float32's largest finite value: an infinite Clip bound (the default of an absent one) is this in ONNX
FLT_MAX = 3.4028234663852886e38


def activation_code(attrs: Mapping) -> tuple[int, float, float]:
    """(code, alpha, beta) of a node's fused activation (its `activation` attribute, "none" when absent).
    A clip's infinite bounds become float32's finite extremes, as ONNX defines Clip."""
    code = ACT_CODES[attrs.get("activation", "none")]
    alpha, beta = float(attrs.get("act_alpha", 0.0)), float(attrs.get("act_beta", 0.0))
    if code == ACT_CODES["clip"]:
        alpha, beta = clip_float32(alpha, beta)
    return code, alpha, beta


def clip_float32(lo: float, hi: float) -> tuple[float, float]:
    """Clip's bounds for float32 kernels: infinite ones (absent bounds) made finite; NaN kept (no bound)."""
    return (max(lo, -FLT_MAX) if lo == lo else lo), (min(hi, FLT_MAX) if hi == hi else hi)


def activation_defines() -> str:
    """`#define MNN_ACT_<NAME> <code>` lines, for kernel source that cannot include abi.h (OpenCL C)."""
    return "".join(f"#define MNN_ACT_{name.upper()} {code}\n" for name, code in ACT_CODES.items())

"""What precision="low" means on x86: bf16 GEMMs where the CPU has AVX-512 BF16.

Under a session's precision="low", with the AVX-512 kernels active and cpuid reporting
AVX512_BF16, the GEMM-based float kernels (1x1 and im2col convolutions, the 36 GEMMs of Winograd
F(4x4, 3x3), MatMul / Gemm with constant weights) multiply bf16 operands with VDPBF16PS: weights
rounded to bf16 once at prepare, activations while they are packed, sums in fp32 (csrc/bf16.h).
Everything else stays fp32: depthwise convolutions, Winograd's transforms, element-wise ops, every
tensor between ops. Anywhere else (precision "normal" or "high", a CPU without BF16, x86.isa
forced to avx2 or scalar) nothing changes.

The session option "x86.bf16" (or MNN_X86_BF16) is "auto" (the default: as above), "direct"
(Winograd stays fp32: its transforms spread a rounding over more of the output, README
"Precision") or "off" (fp32 under precision="low" too, to compare).
"""

from __future__ import annotations

import os

from mnn_core.errors import BackendError

OPTION = "x86.bf16"
ENV_VAR = "MNN_X86_BF16"
CHOICES = ("auto", "direct", "off")


def setting(options: dict | None = None) -> str:
    """The "x86.bf16" option, else MNN_X86_BF16, else "auto"; anything else is an error naming both."""
    value = (options or {}).get(OPTION)
    source = f"option {OPTION}"
    if value is None or not str(value).strip():
        value, source = os.environ.get(ENV_VAR, ""), ENV_VAR
    value = str(value).strip().lower() or "auto"
    if value not in CHOICES:
        raise BackendError(
            f"x86: {source}={value!r}; use 'auto' (bf16 GEMMs under precision='low'), "
            "'direct' (Winograd's stay fp32) or 'off'"
        )
    return value


def use_bf16(ctx, isa: str) -> bool:
    """Whether a session's GEMM kernels run on bf16 under the ISA level `isa`."""
    from . import _x86

    choice = setting(getattr(ctx, "options", None))  # checked in every session: a typo is an error
    if getattr(ctx, "precision", "normal") != "low" or choice == "off":
        return False
    return _x86.bf16_runs(isa)


def winograd_bf16(ctx) -> bool:
    """Whether, when use_bf16 holds, Winograd's 36 GEMMs run on bf16 too (x86.bf16 is not "direct")."""
    return setting(getattr(ctx, "options", None)) == "auto"

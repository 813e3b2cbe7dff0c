"""Depthwise 7x7 convolutions of stride 1 and dilation 1 (ConvNeXt's) on conv_dw7.comp: each invocation
computes 7 outputs down one column from the 13 input rows they share, the channel's 49 weights in
registers, where conv_dw.comp's one output per invocation loads 49 inputs and 49 weights for 49 FMAs
(a load-bound kernel: ConvNeXt-T's depthwise layers at batch 16 ran far below the GPU's bandwidth).
The same bindings and parameters as conv_dw.comp; float32 only.

The option "vulkan.dw_strip" (or MNN_VULKAN_DW_STRIP): "default" (on a GPU), "1" (on any device,
for tests), "0" (conv_dw.comp, as before)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.shader_ops import operand_bindings

OPTION = "vulkan.dw_strip"
#: output rows an invocation computes (conv_dw_strip.glsl's ROWS): 56, 28, 14 and 7 divide by it
ROWS = 7


def takes(rec, p) -> bool:
    """Whether ConvPlan p runs on conv_dw7.comp."""
    from .matmul import is_gpu, option_text

    options = rec.options or {}
    value = option_text(options, OPTION, "MNN_VULKAN_DW_STRIP", "default")
    if value in ("0", "false", "off"):
        return False
    if value not in ("default", "1", "true", "on"):
        raise ValueError(f"{OPTION} must be default, 1 or 0, got {value!r}")
    if rec.half or not p.depthwise or (p.kh, p.kw, p.sh, p.sw, p.dh, p.dw) != (7, 7, 1, 1, 1, 1):
        return False
    return value != "default" or is_gpu(rec.device, options)


def record(rec, op, p) -> None:
    """One invocation per ROWS outputs of a column."""
    count = p.n * p.o * cdiv(p.oh, ROWS) * p.ow
    rec.elementwise("conv_dw7", operand_bindings(op, rec, stand_in=1), p.dw_params(), count)

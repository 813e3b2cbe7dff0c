"""Warp-tile blocks for float32 GEMMs that 128x128 blocks fit badly: outputs 192 wide (gemm_warp_n96.comp's
128x192 blocks: ConvNeXt's stage-2 MLP down projection, a quarter of a 128-wide block's work padding;
its 128x96 blocks only where forced), outputs 96 wide (128x128: ConvNeXt's stage-1 down projection, on
gemm.comp's 2x4 tiles before), and outputs of 64 to 127 rows or columns (gemm_warp.comp's 64x128 and
128x64: a 1x1 convolution to 64 channels, attention's probabilities @ V). Among the blocks that give
the GPU enough warps, the one with the least padded output per unit of the block's efficiency
(EFFICIENCY), 128x128 (the measured default) on a tie: so BERT-base's and ViT-S/16's GEMMs keep
128x128, and a block only wins where it pads much less.

The option "vulkan.warp_narrow" (or MNN_VULKAN_WARP_NARROW) picks: "default" (the rule above on a
discrete GPU), "n96" (128x192 and 128x96 only, where the rule among them and 128x128 takes one),
"any" (the rule on any device, for tests), "0" (off: the rule before, gemm.comp below 128 rows or
columns) or a block of NARROW, forced on every float32 GEMM (tests, sweeps). Other forced choices
("vulkan.tiles", "vulkan.big_gemm", "vulkan.big_gemm_shader" other than warp) leave it out."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.loops import budget_of

OPTION = "vulkan.warp_narrow"
#: block -> (shader, local size, warps along N, (BM, BN)), in the order ties are broken
NARROW = {
    "128x128": ("gemm_warp", (256, 1, 1), 2, (128, 128)),
    "128x192": ("gemm_warp_n96", (256, 1, 1), 2, (128, 192)),
    "128x96": ("gemm_warp_n96", (128, 1, 1), 1, (128, 96)),
    "128x64": ("gemm_warp", (128, 1, 1), 1, (128, 64)),
    "64x128": ("gemm_warp", (128, 1, 1), 2, (64, 128)),
}
N96_ONLY = ("128x128", "128x192", "128x96")
#: a block's speed per output against 128x128's at equal padding, from the H100 (benchmarks/RESULTS_GPU.md,
#: 2026-12-07 22:30 and 2026-12-08 01:15): the half-size blocks took 1.2-1.35x 128x128's time; 128x96 lost
#: to 128x128 padded a quarter on a 96-wide output, 128x192 beat it by a quarter on a 192-wide one
EFFICIENCY = {"128x128": 1.0, "128x192": 0.95, "128x96": 0.65, "128x64": 0.75, "64x128": 0.75}
#: the warps per SM a block must give: the 128x128 default's threshold (66 groups of 8 warps on 132 SMs)
MIN_WARPS_PER_SM = 4
#: the SMs that threshold was measured on (an H100 and an H200 have 132)
GPU_SMS = 132


def wanted(options: dict) -> str:
    """The option's value, lower case ("default" where unset)."""
    from .matmul import option_text

    return option_text(options, OPTION, "MNN_VULKAN_WARP_NARROW", "default")


def pick(device, m: int, n: int, batch: int, names=tuple(NARROW)) -> str | None:
    """The rule's block for an M x N output, `batch` times: the least padded output over EFFICIENCY
    among the blocks that give MIN_WARPS_PER_SM; None where none does or the output has fewer than 64
    rows or columns."""
    if m < 64 or n < 64:
        return None
    sms = int(getattr(device, "props", {}).get("sm_count", 0) or GPU_SMS)
    best, best_cost = None, None
    for name in names:
        _, local, _, (bm, bn) = NARROW[name]
        groups = cdiv(m, bm) * cdiv(n, bn) * batch
        if groups * (local[0] // 32) < MIN_WARPS_PER_SM * sms:
            continue
        cost = cdiv(m, bm) * bm * cdiv(n, bn) * bn / EFFICIENCY[name]
        if best_cost is None or cost < best_cost:
            best, best_cost = name, cost
    return best


def choose(rec, m: int, n: int, k: int, batch: int) -> tuple | None:
    """(shader, local size, warps along N, (BM, BN)) for a float32 GEMM, or None to leave it to
    big_gemm_local and gemm.comp (the option off, another one forced, float16, a K past lavapipe's
    loop budget, or no block wanted)."""
    from .matmul import big_gemm_shader, option_text

    options = rec.options or {}
    value = wanted(options)
    if value in ("0", "false", "off") or rec.half or options.get("vulkan.tiles"):
        return None
    big = option_text(options, "vulkan.big_gemm", "MNN_VULKAN_BIG_GEMM", "default")
    if big != "default" or big_gemm_shader(options) != "warp":
        return None
    if budget_of(rec.device.name) is not None and k > 16384:
        return None
    if value in NARROW:
        return NARROW[value]
    if value not in ("default", "n96", "any"):
        raise ValueError(f"{OPTION} must be default, n96, any, 0 or one of {', '.join(NARROW)}, got {value!r}")
    if value != "any" and rec.device.type != "discrete":
        return None
    name = pick(rec.device, m, n, batch, N96_ONLY if value == "n96" else tuple(NARROW))
    if name is None or (value == "n96" and name == "128x128"):
        return None
    return NARROW[name]

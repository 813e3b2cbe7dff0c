"""Conv: depthwise (conv_dw.comp; 7x7 of stride 1 on conv_dw7.comp, dw_strip.py), 1x1 as a
batched GEMM (gemm.comp), and everything else as an implicit GEMM (conv2d.comp, or conv_warp.comp's
warp tiles where "vulkan.conv_warp" asks for them); on tensor cores (use_coopmat) gemm_coop.comp and
conv_coop.comp. Bias and the fused activation are applied as the results are written. Under float16
storage (Recorder.half) the recorder picks the *_h variants: float16 tensors, float16 products
summed in float32 every BK steps (see tile.glsl)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.loops import budget_of
from mnn_core.backend.kit.params import conv_plan, pack
from mnn_core.backend.kit.shader_ops import conv_operands, conv_supports
from mnn_core.backend.kit.tiling import blocks

from . import register
from .loops import within_budget
from .matmul import (
    COOP_BLOCK,
    COOP_LOCAL,
    FEW_ROWS,
    GPU_SMS,
    SMALL,
    WARP_BK8_MAX_K,
    WARP_FULL_WAVES,
    WARP_GEMM,
    budget_splits,
    dispatch_gemm,
    gemm_tiles,
    is_gpu,
    option_text,
    split_k,
    use_coopmat,
    warp_block,
    warp_blocks,
    warp_spec,
)

#: the least K a split-K slice of conv_warp.comp keeps, and the most slices
WARP_SPLITK_MIN = 256
WARP_SPLITK_MAX = 8
#: the default's convolutions on conv_warp.comp (3x3, stride 1, at most this many channels in and out, in
#: 64x128 blocks of 8-deep K slices, where those blocks alone give WARP_FULL_WAVES work groups per SM): on
#: the H100 ResNet-50's 16x64x56x56 -> 64 took 0.198 ms against conv2d.comp's 0.234; its wider 3x3s lost
#: on every conv_warp block (benchmarks/RESULTS_GPU.md)
CONV_WARP_MAX_CHANNELS = 64


def _record(op, rec):
    from . import dw_strip

    p = conv_plan(op)
    if dw_strip.takes(rec, p):  # a depthwise 7x7: 7 outputs an invocation
        dw_strip.record(rec, op, p)
        return
    planned = conv_operands(op, rec)
    if planned is None:  # depthwise: recorded
        return
    record_implicit_gemm(rec, *planned, op.outputs[0].info.nbytes)


def record_implicit_gemm(rec, p, bindings: list, y_nbytes: int) -> None:
    """conv2d.comp over a plan's implicit GEMM, bindings [X, W, bias, Y]: K cut into slices (split-K)
    where a GPU has too few work groups or lavapipe's loop budget needs it; a 1x1 convolution
    that needs neither runs as a batched GEMM (gemm.comp)."""
    og, k, cols = p.gemm
    local, spec, (bm, bn) = gemm_tiles(rec.device, og, cols, p.g, rec.options, k=k)
    grid = (cdiv(cols, bn), cdiv(og, bm), p.g)
    splits = split_k(rec.device, grid[0] * grid[1] * p.g, k, rec.options) if p.g <= 4096 else 1
    splits = max(splits, budget_splits(rec.device, local, spec, (bm, bn), k))  # lavapipe's loop budget
    if use_coopmat(rec, og, cols):
        if p.pointwise and p.h * p.w >= COOP_BLOCK and p.h * p.w % 8 == 0 and p.n * p.g <= 65535:
            _pointwise(rec, bindings, p)  # whole blocks of 16-byte rows per image: gemm_coop.comp
        else:
            push = p.conv2d_params(1, k)  # conv_coop.comp: images folded into the columns, no split-K
            grid = (cdiv(cols, COOP_BLOCK), cdiv(og, COOP_BLOCK), p.g)
            rec.dispatch("conv_coop", bindings + [bindings[3], rec.constant(p.k_table())], push, grid, COOP_LOCAL)
        return
    if p.pointwise and splits == 1 and p.n * p.g <= 65535:
        warp = _folded_pointwise(rec, p)
        if warp is None:
            _pointwise(rec, bindings, p)
            return
    else:
        warp = conv_warp_plan(rec, og, cols, k, p.g, default=_conv_warp_by_default(rec, p))
    if warp is not None:
        local, warps_n, splits = warp
        spec = warp_spec(rec.device, rec.options or {}, local, warps_n, cdiv(k, splits))
        bm, bn = warp_blocks(local, warps_n)
        grid = (cdiv(cols, bn), cdiv(og, bm), p.g)
        shader = "conv_warp"
    else:
        shader = "conv2d"
    chunk = cdiv(cdiv(k, splits), 16) * 16  # K per slice, in whole BK steps
    splits = cdiv(k, chunk)
    partial = rec.scratch(splits * y_nbytes, written=True) if splits > 1 else bindings[3]
    table = rec.constant(p.k_table())
    push = p.conv2d_params(splits, chunk)
    rec.dispatch(shader, bindings + [partial, table], push, (grid[0], grid[1], p.g * splits), local, spec)
    if splits > 1:
        push = pack(p.total, splits, p.oh * p.ow, p.o, p.has_bias, p.act, p.alpha, p.beta)
        partials = rec.scratch(splits * y_nbytes, written=False)
        rec.elementwise("splitk_reduce", [partials, bindings[2], bindings[3]], push, p.total)


def _folded_pointwise(rec, p) -> tuple | None:
    """conv_warp_plan's "auto" for a 1x1 convolution of one group with the images folded into the
    columns, where "vulkan.pointwise_fold" (a pixel count; 0, the default: never) is above an image's
    pixels: per image such a GEMM has few columns (ResNet-50's 14x14 and 7x7 stages: 196 and 49),
    which pad the warp tiles' blocks or stay on gemm.comp; 16 images folded fill them. For the
    device's sweep. None: the batched GEMM."""
    limit = int((rec.options or {}).get("vulkan.pointwise_fold", 0) or 0)
    if p.h * p.w >= limit or p.g != 1:
        return None
    og, k, cols = p.gemm
    return conv_warp_plan(rec, og, cols, k, 1, default=True)


def _conv_warp_by_default(rec, p) -> bool:
    """Whether the default takes conv_warp.comp for convolution p: a discrete GPU, 3x3, stride 1, one
    group, at most CONV_WARP_MAX_CHANNELS in and out, K within WARP_BK8_MAX_K (8-deep slices) and 64x128
    blocks that give WARP_FULL_WAVES work groups per SM unsplit (ResNet-50's first stage at batch 16)."""
    if rec.device.type != "discrete" or (p.kh, p.kw, p.sh, p.sw, p.g) != (3, 3, 1, 1, 1):
        return False
    og, k, cols = p.gemm
    if og > CONV_WARP_MAX_CHANNELS or p.cg > CONV_WARP_MAX_CHANNELS or k > WARP_BK8_MAX_K:
        return False
    sms = int(getattr(rec.device, "props", {}).get("sm_count", 0) or GPU_SMS)
    return cdiv(og, 64) * cdiv(cols, 128) >= WARP_FULL_WAVES * sms


def conv_warp_plan(rec, og: int, cols: int, k: int, groups: int, default: bool = False) -> tuple | None:
    """conv_warp.comp's (local size, warps along N, split-K slices) for a float32 implicit GEMM of og x
    cols outputs (`groups` times) over K, or None for conv2d.comp. "vulkan.conv_warp" or
    MNN_VULKAN_CONV_WARP: "default" (as "auto" where `default` says so, _conv_warp_by_default; else
    never), "0" (never), "auto" (warp_block's block: 128x128 where those
    give 1.5 waves of work groups, else 128x64 or 64x128), or a block of WARP_GEMM, forced; K is cut
    into slices where the blocks are still fewer than those waves (warp_splits). Forced tilings
    ("vulkan.tiles") keep conv2d.comp, and so does a K past lavapipe's loop budget."""
    options = rec.options or {}
    wanted = option_text(options, "vulkan.conv_warp", "MNN_VULKAN_CONV_WARP", "default")
    if wanted == "default":
        wanted = "auto" if default else "0"
    if wanted in ("0", "false", "off") or rec.half or options.get("vulkan.tiles"):
        return None
    if budget_of(rec.device.name) is not None and k > 16384:
        return None
    auto = wanted == "auto"
    if auto:
        wanted = warp_block(rec.device, og, cols, groups)
    if wanted not in WARP_GEMM:
        raise ValueError(f"vulkan.conv_warp must be 0, auto or {', '.join(WARP_GEMM)}, got {wanted!r}")
    local, warps_n = WARP_GEMM[wanted]
    bm, bn = warp_blocks(local, warps_n)
    blocks = cdiv(og, bm) * cdiv(cols, bn) * groups
    splits = warp_splits(rec.device, options, blocks, k)
    sms = int(getattr(rec.device, "props", {}).get("sm_count", 0) or GPU_SMS)
    if auto and is_gpu(rec.device, options) and blocks * splits < sms:
        return None  # under one wave even split (a batch-1 layer): conv2d.comp's smaller tiles
    return local, warps_n, splits if groups * splits <= 65535 else 1


def warp_splits(device, options: dict, blocks: int, k: int) -> int:
    """Slices of K for conv_warp.comp where its blocks give fewer work groups than the GPU has SMs:
    enough for WARP_FULL_WAVES work groups per SM, each at least WARP_SPLITK_MIN deep, at most
    WARP_SPLITK_MAX ("vulkan.splitk" forces a count, for tests); 1 on a CPU device. The option
    "vulkan.conv_warp_fill" (work groups per SM, e.g. 6) splits wherever the blocks give fewer than
    that, in slices of at least 128: the SMs' warps, not only their count, for the device's sweep."""
    forced = options.get("vulkan.splitk")
    if forced:
        return max(1, min(int(forced), cdiv(k, 16)))
    sms = int(getattr(device, "props", {}).get("sm_count", 0) or GPU_SMS)
    fill = float(options.get("vulkan.conv_warp_fill", 0) or 0)
    if fill > 0 and is_gpu(device, options) and 0 < blocks < fill * sms:
        return max(1, min(cdiv(int(fill * sms), blocks), k // 128, WARP_SPLITK_MAX))
    if not is_gpu(device, options) or blocks == 0 or blocks >= sms:
        return 1
    return max(1, min(cdiv(int(WARP_FULL_WAVES * sms), blocks), k // WARP_SPLITK_MIN, WARP_SPLITK_MAX))


def _pointwise(rec, bindings, p):
    """Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g] (cg x HW): one GEMM per (image, group)."""
    x, w, bias, y = bindings
    dispatch_gemm(rec, [w, x, bias, y], p.pointwise_params(), p.o // p.g, p.h * p.w, p.n * p.g, p.cg)


def _supports(node, ins):
    """conv_supports, then lavapipe's loop budget: a depthwise window (conv_dw.comp walks it in one
    invocation) of bounded size, and K cut into slices (split-K) that the work-group grid holds."""
    found = conv_supports(node, ins)
    if found is not True:
        return found
    from ..device import choose

    w = ins[1].shape
    kh, kw = (w[2], w[3]) if len(w) == 4 else (1, w[2])
    groups = int(node.attrs.get("group", 1) or 1)
    if groups > 1 and w[1] == 1:  # depthwise: conv_dw.comp (or conv2d.comp: counted below too)
        window = within_budget(kh * (kw + 3) + 16, f"a Conv window of {kh}x{kw}")
        if window is not True:
            return window
    k = w[1] * kh * kw
    # the most slices a CPU device's tilings need (64 invocations of 4x4 or of 4x1 outputs)
    splits = max(budget_splits(choose(), local, spec, blocks(local, spec), k) for local, spec in (SMALL, FEW_ROWS))
    if splits > 1 and groups * splits > 65535:
        return f"a Conv over K={k} needs {splits} slices of K on lavapipe (its loop budget) for {groups} groups"
    return True


register("Conv", _record, _supports, efficiency=0.3)

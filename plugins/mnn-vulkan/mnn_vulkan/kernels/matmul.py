"""MatMul (numpy semantics, broadcast batch dims) and Gemm (transposes, broadcast
C, alpha/beta), both on gemm.comp with a fused activation; `gemm_tiles` picks
the work-group tiling that conv2d.comp shares."""

from __future__ import annotations

import os

import numpy as np

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.loops import budget_of
from mnn_core.backend.kit.params import gemm_args, gemm_params, matmul_args, matmul_plan
from mnn_core.backend.kit.recorder import MAX_GROUPS
from mnn_core.backend.kit.shader_ops import operand_bindings
from mnn_core.backend.kit.tiling import blocks, busiest_tile

from . import register
from .loops import within_budget

#: (local size, (TM, TN, BK)): blocks of 128x128, 64x64 and 32x32 outputs
HUGE = ((16, 16, 1), (8, 8, 16))
BIG = ((16, 16, 1), (4, 4, 16))
SMALL = ((8, 8, 1), (4, 4, 16))
#: A GPU's tilings for layers with few outputs, 256 invocations each (a batch-1 CNN:
#: ResNet-18's 56x56x64 layer is 196 blocks of 32x32, and SMALL's 64 invocations per
#: block left an SM 2 warps, idle on memory latency: 0.2 ms for that layer on the H200).
#: Measured there per layer (plugins/mnn-vulkan/tools/profile_vulkan.py, tilings forced):
#: 32x64 blocks (2x4 outputs per invocation) were fastest where, with split-K, they
#: still gave the GPU enough work groups; 16x16 blocks (1 output each) elsewhere.
WIDE = ((16, 16, 1), (2, 4, 16))
MID = ((16, 16, 1), (2, 2, 16))
ONE = ((16, 16, 1), (1, 1, 16))
#: work groups that keep a discrete GPU busy (an H200 has 132 SMs): split-K cuts an
#: implicit-GEMM convolution's K until it gives about this many (see split_k). 1056 (8 per
#: SM) rather than 264: at batch 16 ResNet-18's 7x7x512 layers (K = 4608, 104 blocks of
#: 64x64) then run in 0.23 ms instead of 0.34 (H200, benchmarks/h200_sweep.sh); batch 1
#: is unchanged.
GPU_WAVE = 1056
#: work groups (after split-K) below which a smaller tile is taken
GPU_ENOUGH = 180
#: the least K a split-K slice keeps (the option "vulkan.splitk_min" changes it, for sweeps): 128, not
#: 256, since on the H100 slices of 128 ran batch-1 ViT-S/16, BERT-base and ConvNeXt-T fastest
#: (ViT's K = 384 GEMMs split at all; benchmarks/RESULTS_GPU.md)
SPLITK_MIN = 128
#: the SMs of the GPUs GPU_WAVE and GPU_ENOUGH were measured on (H200, H100); a device that
#: reports its own count (VK_NV_shader_sm_builtins: props["sm_count"]) scales both by it
GPU_SMS = 132


#: a CPU device's tiling for at most 8 rows: blocks of 4 x 64 (1 x 64 for one row)
FEW_ROWS = ((64, 1, 1), (4, 1, 16))

TILES = {"huge": HUGE, "big": BIG, "small": SMALL, "wide": WIDE, "mid": MID, "one": ONE}


def option_text(options: dict | None, key: str, env: str, default: str) -> str:
    """A string option's value, lower case: the session's, else the environment variable's, else
    `default`; a number as its text (tools/sweep_tiling.py passes "0" as 0, which is not unset)."""
    value = (options or {}).get(key)
    if value is None or value == "":
        value = os.environ.get(env) or default
    return str(value).lower()


def _custom_tiles(text: str):
    """ "TXxTYxTMxTNxBK" (e.g. "16x16x2x2x16"): any tiling, for tuning sweeps."""
    try:
        tx, ty, tm, tn, bk = (int(v) for v in str(text).split("x"))
    except ValueError:
        raise ValueError(f"vulkan.tiles must be one of {', '.join(TILES)} or TXxTYxTMxTNxBK, got {text!r}") from None
    if tx * ty > 1024 or min(tx, ty, tm, tn, bk) < 1 or tm * tn > 64 or ty % tn:
        raise ValueError(f"vulkan.tiles {text!r}: at most 1024 invocations and 64 outputs each, TY a multiple of TN")
    return (tx, ty, 1), (tm, tn, bk)


def is_gpu(device, options: dict | None = None) -> bool:
    """Whether tiling and split-K follow a GPU's needs. The option "vulkan.gpu_tiling"
    (True) takes the GPU choices on any device: tests run them on lavapipe."""
    return bool((options or {}).get("vulkan.gpu_tiling")) or device.type in ("discrete", "integrated")


def gemm_tiles(device, m: int, n: int, batch: int, options: dict | None = None, k: int = 0):
    """(local size, spec constants, (BM, BN)) for an M x N output, `batch` times:
    the largest tile that still gives every compute unit work. On a GPU with `k`
    given (conv2d.comp, which can split K), a tile counts the work groups split-K
    would add. On a CPU device, 4 x 64 (or 1 x 64) blocks when M is tiny. The option
    "vulkan.tiles" (a name of TILES, or TXxTYxTMxTNxBK) forces one, for tests."""
    forced = (options or {}).get("vulkan.tiles")
    if forced:
        local, spec = TILES[forced] if forced in TILES else _custom_tiles(forced)
        return local, spec, blocks(local, spec)
    gpu = is_gpu(device, options)
    if m <= 8 and not gpu:
        local, (tm, tn, bk) = FEW_ROWS
        tm = 1 if m == 1 else tm
        return local, (tm, tn, bk), (tm, 64)
    if not gpu:  # a CPU device (lavapipe) has a few cores to fill
        bm, bn = blocks(*BIG)
        if bm <= m and bn <= max(n, 64) and cdiv(m, bm) * cdiv(n, bn) * batch >= 8:
            return BIG[0], BIG[1], (bm, bn)
        return SMALL[0], SMALL[1], blocks(*SMALL)
    # On a GPU: for a convolution (k given: conv2d.comp) 64x64 blocks of 4x4 outputs first,
    # then 32x64 (2x4), 32x32, 16x16, the first that gives enough work groups with split-K;
    # for a GEMM (and 1x1 convolutions, which run one) 32x64 first. H200, every layer
    # forced to each tiling (benchmarks/h200_sweep.sh): BIG ran ResNet-18's 3x3 layers at
    # batch 16 in 4.8 ms against 6.5 with WIDE, and MobileNetV2's 1x1 GEMMs 10-30% slower
    # than WIDE; 8x8 outputs per invocation (HUGE) were 6-8x slower than BIG at any batch.
    order, wave, enough = _gpu_knobs(options, conv=bool(k), device=device)
    more = (lambda groups: split_k(device, groups, k, options or {})) if k else None
    return busiest_tile(m, n, batch, order, enough, more)


def _gpu_knobs(options: dict | None, conv: bool = False, device=None):
    """A GPU's tilings in order of preference, its work-group wave (split-K below half of
    it) and the work groups a tiling must give. Session options override them, for tuning
    sweeps on a device (tools/profile_vulkan.py --option): "vulkan.gpu_tilings" (names of
    TILES or TXxTYxTMxTNxBK, comma-separated), "vulkan.gpu_wave", "vulkan.gpu_enough"."""
    o = options or {}
    names = o.get("vulkan.gpu_tilings")
    if names:
        order = [TILES[t] if t in TILES else _custom_tiles(t) for t in str(names).split(",") if t]
    else:
        order = [BIG, WIDE, MID, ONE] if conv else [WIDE, MID, ONE]
    sms = int(getattr(device, "props", {}).get("sm_count", 0) or GPU_SMS)
    wave = int(o.get("vulkan.gpu_wave", GPU_WAVE * sms // GPU_SMS))
    return order, wave, int(o.get("vulkan.gpu_enough", GPU_ENOUGH * sms // GPU_SMS))


def split_k(device, groups: int, k: int, options: dict) -> int:
    """How many slices to cut K into so that a small output still fills a GPU
    (1 on CPU devices; the option "vulkan.splitk" forces a count, for tests)."""
    forced = options.get("vulkan.splitk")
    if forced:
        return max(1, min(int(forced), cdiv(k, 16)))
    _, wave, _ = _gpu_knobs(options, device=device)
    if not is_gpu(device, options) or groups == 0 or groups * 2 >= wave:
        return 1  # groups == 0: an empty output (a zero batch) has nothing to split
    least = int(options.get("vulkan.splitk_min", SPLITK_MIN))
    return max(1, min(cdiv(wave, groups), k // least, 16))


def _matmul_supports(node, ins):
    m, n, k, dims, *_ = matmul_plan(ins[0].shape, ins[1].shape)
    if len(dims) > 2:
        return f"batch broadcasting needs {len(dims)} dims after collapsing (max 2)"
    if int(np.prod(dims)) > MAX_GROUPS:
        return f"{int(np.prod(dims))} matrices exceed the work-group grid"
    return _k_supported(m, n, k, int(np.prod(dims)), "a MatMul")


def _gemm_supports(node, ins):
    a, b = ins[0].shape, ins[1].shape
    m, k = (a[1], a[0]) if node.attrs.get("transA", 0) else (a[0], a[1])
    n = b[0] if node.attrs.get("transB", 0) else b[1]
    return _k_supported(m, n, k, 1, "a Gemm")


#: loop passes of one gemm.comp invocation besides its K steps
TILE_FIXED_PASSES = 16


def _step_passes(local: tuple, spec: tuple, block: tuple) -> int:
    """Loop passes of one BK step of gemm.comp: the K loop's pass and its two staging loops' (each
    with its leaving pass); the tile's own loops are unrolled."""
    nt, bk = local[0] * local[1], spec[2]
    return 3 + cdiv(bk * block[0], nt) + cdiv(bk * block[1], nt)


def tile_passes(local: tuple, spec: tuple, block: tuple, k: int) -> int:
    """Loop passes of one gemm.comp invocation over K."""
    return cdiv(k, spec[2]) * _step_passes(local, spec, block) + TILE_FIXED_PASSES


def budget_splits(device, local: tuple, spec: tuple, block: tuple, k: int) -> int:
    """Slices of K (whole BK steps each) that keep one gemm.comp/conv2d.comp invocation's loops
    within the device's loop budget: 1 where it has none (a GPU), more on lavapipe for a long K."""
    budget = budget_of(device.name)
    if budget is None:
        return 1
    return cdiv(k, max(1, (budget - TILE_FIXED_PASSES) // _step_passes(local, spec, block)) * spec[2])


def gemv_passes(k: int) -> int:
    """Loop passes of one gemv.comp invocation, its row loop counted as if not unrolled."""
    return (cdiv(k, GEMV_LOCAL) + 8) * (GEMV_ROWS + 2) + 16


def _tile_too_long(device, m: int, n: int, k: int, batch: int, options: dict | None) -> bool:
    """Whether gemm.comp's loops over K would pass the device's loop budget (lavapipe's)."""
    budget = budget_of(device.name)
    if budget is None:
        return False
    local, spec, block = gemm_tiles(device, m, n, batch, options)
    return tile_passes(local, spec, block, k) > budget


def _k_supported(m: int, n: int, k: int, batch: int, what: str):
    """A long K on lavapipe: gemv.comp shares it among 128 invocations where A has at most
    GEMV_ROWS rows; more rows would take gemm.comp past the loop budget, so they are declined."""
    from ..device import choose

    if not _tile_too_long(choose(), m, n, k, batch, None):
        return True
    if m <= GEMV_ROWS:
        return within_budget(gemv_passes(k), f"{what} over K={k}")
    if what == "a MatMul" and batch == 1:
        local, spec, block = gemm_tiles(choose(), m, n, 1, k=k)
        splits = budget_splits(choose(), local, spec, block, k)
        return True if splits <= 65535 else f"{what} over K={k} needs {splits} slices of K (max 65535)"
    local, spec, block = gemm_tiles(choose(), m, n, batch)
    return within_budget(tile_passes(local, spec, block, k), f"{what} of {m} rows over K={k}")


def _record_matmul(op, rec):
    a, b = op.inputs
    args = matmul_args(op)
    m, n, k, nb1, nb2 = args[:5]
    bindings = [rec.tensor(a), rec.tensor(b), rec.tensor(a), rec.output(op.outputs[0])]
    if m > GEMV_ROWS and nb1 * nb2 == 1 and _tile_too_long(rec.device, m, n, k, 1, rec.options):
        _record_as_conv(rec, bindings, m, n, k, args[-3:], op.outputs[0].info.nbytes)
        return
    _gemm(rec, bindings, *args)


def _record_as_conv(rec, bindings: list, m: int, n: int, k: int, act: tuple, y_nbytes: int) -> None:
    """A (M x K) @ B (K x N) as a 1x1 convolution of B (K channels of 1 x N) by A's rows, on
    conv2d.comp, whose split-K keeps each slice of a long K within lavapipe's loop budget."""
    from mnn_core.backend.kit.params import ConvPlan

    from .conv import record_implicit_gemm

    p = ConvPlan(1, k, 1, n, m, k, 1, 1, 1, n, 1, (0, 0, 0, 0), 1, 1, 1, 1, *act, 0, m * n)
    a, b, _, y = bindings
    record_implicit_gemm(rec, p, [b, a, a, y], y_nbytes)


#: gemv.comp: rows of A it takes (its shared memory holds this many partial sums per invocation)
GEMV_ROWS = 8
GEMV_LOCAL = 128


def use_gemv(device, m: int, k: int, b_sk: int, options: dict | None = None) -> bool:
    """A few rows times a B with k contiguous (a classifier's transposed weights), on a GPU:
    one work group per output column beats any register tile there. "vulkan.gemv" (True
    or False) forces the choice, for tests."""
    forced = (options or {}).get("vulkan.gemv")
    if forced is not None:
        return bool(forced) and m <= GEMV_ROWS
    return (
        m <= GEMV_ROWS and b_sk == 1 and k >= 64 and is_gpu(device, options) and not (options or {}).get("vulkan.tiles")
    )


#: gemm_coop.comp's block of C, work group (8 subgroups of 32) and shared memory
COOP_BLOCK = 128
COOP_LOCAL = (256, 1, 1)
COOP_SHARED = 49152


def use_coopmat(rec, m: int, n: int) -> bool:
    """Tensor cores (gemm_coop.comp) for a GEMM on float16 tensors, where the device
    multiplies 16x16x16 float16 matrices per subgroup of 32 (VK_NV_cooperative_matrix) and
    the output fills at least one 16x16 matrix, when asked for: "vulkan.coopmat" (True) or
    MNN_VULKAN_COOPMAT=1. The shader wants 48 KiB of shared memory and storage buffers bound at
    16-byte boundaries (its 16-byte loads). Off by default (benchmarks/RESULTS_GPU.md). Forced
    tilings keep the plain shader."""
    if not (rec.half and rec.native) or (rec.options or {}).get("vulkan.tiles"):
        return False
    props = rec.device.props
    if not (props.get("coopmat") and props.get("subgroup_size") == 32):
        return False
    if props.get("max_shared_bytes", 0) < COOP_SHARED or props.get("min_storage_align", 0) % 16:
        return False
    wanted = (rec.options or {}).get("vulkan.coopmat", os.environ.get("MNN_VULKAN_COOPMAT", "0"))
    return str(wanted).lower() not in ("0", "false") and m >= 16 and n >= 16


#: gemm_big.comp's work groups (8x8 outputs per invocation): 128x128 blocks of C, or 64x128
BIG_GEMM = {"128x128": (16, 16, 1), "64x128": (16, 8, 1)}
#: work groups "auto" wants from a block size before taking it (an H100 has 132 SMs)
BIG_GEMM_ENOUGH = 132
#: work groups of 128x128 blocks that make them a discrete GPU's default (half of GPU_SMS, scaled by
#: the device's SM count): on the H100 forced 128x128 blocks beat gemm.comp on every GEMM of ViT-S/16
#: and BERT-base at batch 16, whose 384- and 768-wide ones give 75 and 96 (benchmarks/RESULTS_GPU.md)
BIG_GEMM_DEFAULT_GROUPS = 66


def big_gemm_bk(device, local: tuple) -> int:
    """gemm_big.comp's K slice: 16 where shared memory holds two buffered 16-deep slices of A and B
    (vec4s, a padding one per row), else 8 (lavapipe's 32 KiB at 128x128)."""
    vec4s = 2 * 16 * ((8 * local[1]) // 4 + 1 + (8 * local[0]) // 4 + 1)
    return 16 if device.props.get("max_shared_bytes", 0) >= vec4s * 16 else 8


def _big_by_default(device, m: int, n: int, batch: int) -> tuple | None:
    """128x128 blocks on a discrete GPU where the output holds one each way and they give enough work
    groups; else None (gemm.comp, or its split-K for a batch of one)."""
    if device.type != "discrete" or m < 128 or n < 128:
        return None
    sms = int(getattr(device, "props", {}).get("sm_count", 0) or GPU_SMS)
    enough = max(1, BIG_GEMM_DEFAULT_GROUPS * sms // GPU_SMS)
    return BIG_GEMM["128x128"] if cdiv(m, 128) * cdiv(n, 128) * batch >= enough else None


def big_gemm_local(rec, m: int, n: int, k: int, batch: int) -> tuple | None:
    """The large-block shader's work group for a float32 M x N output (`batch` times), or None for
    gemm.comp: gemm_warp.comp's (WARP_GEMM), gemm_big.comp's (BIG_GEMM) or gemm_warp_wide.comp's
    (WARP_WIDE_GEMM), as "vulkan.big_gemm_shader" says. By default 128x128 blocks on a discrete GPU
    where they fill it (_big_by_default), whichever the shader.
    "vulkan.big_gemm" or MNN_VULKAN_BIG_GEMM: "0" (never), a block of the shader's table (forced on
    every such GEMM), "auto" (gemm_big: 128x128 blocks where the output holds one and they give
    BIG_GEMM_ENOUGH work groups, else 64x128 where those do; gemm_warp: warp_block's choice;
    gemm_warp_wide: 128x128; on any device). Forced tilings ("vulkan.tiles") keep gemm.comp;
    so does a K past lavapipe's loop budget."""
    options = rec.options or {}
    wanted = option_text(options, "vulkan.big_gemm", "MNN_VULKAN_BIG_GEMM", "default")
    if wanted in ("0", "false", "off") or rec.half or options.get("vulkan.tiles"):
        return None
    if budget_of(rec.device.name) is not None and k > 16384:
        return None
    shader = big_gemm_shader(options)
    warp = shader == "warp"
    table = {"big": BIG_GEMM, "warp": WARP_GEMM, "warp-wide": WARP_WIDE_GEMM}[shader]
    if wanted in table:
        return table[wanted]
    if wanted == "default":
        if shader == "big":
            return _big_by_default(rec.device, m, n, batch)
        return table["128x128"] if _big_by_default(rec.device, m, n, batch) is not None else None
    if wanted != "auto":
        raise ValueError(f"vulkan.big_gemm must be default, auto, {', '.join(table)} or 0, got {wanted!r}")
    if shader == "warp-wide":
        return table["128x128"] if m >= 64 and n >= 64 else None
    if warp:
        return WARP_GEMM[warp_block(rec.device, m, n, batch)] if m >= 64 and n >= 64 else None
    for local in BIG_GEMM.values():
        bm, bn = 8 * local[1], 8 * local[0]
        if m >= bm and n >= bn and cdiv(m, bm) * cdiv(n, bn) * batch >= BIG_GEMM_ENOUGH:
            return local  # (at least one full block each way: a 7x7 image's 49 columns stay on gemm.comp)
    return None


#: gemm_warp.comp's work groups by block of C: (local size, warps along N); every warp computes 32 x 64
#: outputs, every invocation 8x8
WARP_GEMM = {"128x128": ((256, 1, 1), 2), "128x64": ((128, 1, 1), 1), "64x128": ((128, 1, 1), 2)}
#: gemm_warp_wide.comp's (vulkan.big_gemm_shader=warp-wide): every warp computes 32 x 128 outputs, every
#: invocation 8x16; 4 warps make a 128x128 block, 8 a 256x128 or 128x256 one
WARP_WIDE_GEMM = {"128x128": ((128, 1, 1), 1), "256x128": ((256, 1, 1), 1), "128x256": ((256, 1, 1), 2)}
#: waves of 128x128 blocks (work groups per SM) below which "auto" takes a block of half the size (the
#: default does not: on the H100 half-size blocks lost to 128x128 on every GEMM of BERT-base and ViT-S/16
#: at batch 16, however few groups 128x128 gave; benchmarks/RESULTS_GPU.md)
WARP_FULL_WAVES = 1.5
#: the deepest K that gemm_warp.comp and conv_warp.comp take in slices of 8 by default (16 deeper): on the
#: H100 8-deep slices won on ViT-S/16's K = 384 GEMM (0.182 ms against 0.198) and ResNet-50's 64-channel
#: 3x3s (K = 576), tied at K = 768 and lost from 1536 on
WARP_BK8_MAX_K = 576


def big_gemm_shader(options: dict) -> str:
    """ "warp" (gemm_warp.comp, the default), "big" (gemm_big.comp, the default before) or "warp-wide"
    (gemm_warp_wide.comp: WARP_WIDE_GEMM's blocks, its default 128x128): the option
    "vulkan.big_gemm_shader" or MNN_VULKAN_BIG_GEMM_SHADER, for A/B sweeps on a device
    (tools/bench_gemm.py, sweep_tiling.py) and a way back."""
    wanted = options.get("vulkan.big_gemm_shader", os.environ.get("MNN_VULKAN_BIG_GEMM_SHADER", "warp"))
    wanted = str(wanted or "warp").lower()
    if wanted not in ("big", "warp", "warp-wide"):
        raise ValueError(f"vulkan.big_gemm_shader must be big, warp or warp-wide, got {wanted!r}")
    return wanted


def warp_block(device, m: int, n: int, batch: int) -> str:
    """ "auto"'s gemm_warp.comp block for an M x N output: 64 rows or columns where the output has no
    more, else 128x128 where those give WARP_FULL_WAVES work groups per SM, else 128x64 or 64x128,
    whichever gives more (128x64 where M >= N on a tie)."""
    if m <= 64 or n <= 64:
        return "64x128" if m <= n else "128x64"
    sms = int(getattr(device, "props", {}).get("sm_count", 0) or GPU_SMS)
    if cdiv(m, 128) * cdiv(n, 128) * batch >= WARP_FULL_WAVES * sms:
        return "128x128"
    tall, wide = cdiv(m, 128) * cdiv(n, 64), cdiv(m, 64) * cdiv(n, 128)
    return "128x64" if tall > wide or (tall == wide and m >= n) else "64x128"


def warp_spec(device, options: dict, local: tuple, warps_n: int, k: int = 0, wide: bool = False, block=None) -> tuple:
    """gemm_warp.comp's specialization constants (WARPS_N, VEC, BK): 16-byte loads where every
    storage buffer is bound at a 16-byte boundary (the option "vulkan.big_gemm_vec" False turns them
    off, for tests); K slices of 8 for a K of at most WARP_BK8_MAX_K, else 16 where two buffered ones
    fit in shared memory, else 8; "vulkan.big_gemm_bk" 8 or 16 forces a depth (for sweeps; 16 only
    where it fits). `block` (BM, BN) for another shader of the family (gemm_narrow.NARROW)."""
    bm, bn = block or warp_blocks(local, warps_n, wide)
    vec = int(
        device.props.get("min_storage_align", 0) % 16 == 0
        and str(options.get("vulkan.big_gemm_vec", True)).lower() not in ("0", "false")
    )
    vec4s = 2 * 16 * (bm // 4 + 1 + bn // 4 + 1)
    fits16 = device.props.get("max_shared_bytes", 0) >= vec4s * 16
    forced = str(options.get("vulkan.big_gemm_bk", "") or "")
    if forced not in ("", "8", "16"):
        raise ValueError(f"vulkan.big_gemm_bk must be 8 or 16, got {forced!r}")
    if forced:
        bk = 16 if forced == "16" and fits16 else 8
    else:
        bk = 16 if fits16 and not 0 < k <= WARP_BK8_MAX_K else 8
    return warps_n, vec, bk


def warp_blocks(local: tuple, warps_n: int, wide: bool = False) -> tuple:
    """(BM, BN) of a gemm_warp.comp work group (gemm_warp_wide.comp's where `wide`)."""
    return 32 * (local[0] // 32 // warps_n), (128 if wide else 64) * warps_n


def dispatch_gemm(rec, bindings, push: bytes, m: int, n: int, batch: int, k: int = 0) -> None:
    """gemm.comp's push constants over an M x N output, `batch` times: on tensor cores
    (gemm_coop.comp) where use_coopmat says so, on warp tiles where gemm_narrow.choose or
    big_gemm_local does (gemm_warp.comp's family, or gemm_big.comp), else register-tiled (gemm.comp)."""
    if use_coopmat(rec, m, n):
        rec.dispatch("gemm_coop", bindings, push, (cdiv(n, COOP_BLOCK), cdiv(m, COOP_BLOCK), batch), COOP_LOCAL)
        return
    from .gemm_narrow import choose

    narrow = choose(rec, m, n, k, batch)
    if narrow is not None:  # a block that fits the output better than 128x128 (or that 128x128 skipped)
        name, local, warps_n, (bm, bn) = narrow
        spec = warp_spec(rec.device, rec.options or {}, local, warps_n, k, block=(bm, bn))
        rec.dispatch(name, bindings, push, (cdiv(n, bn), cdiv(m, bm), batch), local, spec)
        return
    local = big_gemm_local(rec, m, n, k, batch)
    shader = big_gemm_shader(rec.options or {})
    if local is not None and shader in ("warp", "warp-wide"):
        local, warps_n = local
        wide = shader == "warp-wide"
        bm, bn = warp_blocks(local, warps_n, wide)
        spec = warp_spec(rec.device, rec.options or {}, local, warps_n, k, wide)
        name = "gemm_warp_wide" if wide else "gemm_warp"
        rec.dispatch(name, bindings, push, (cdiv(n, bn), cdiv(m, bm), batch), local, spec)
        return
    if local is not None:
        bk = big_gemm_bk(rec.device, local)
        groups = (cdiv(n, 8 * local[0]), cdiv(m, 8 * local[1]), batch)
        rec.dispatch("gemm_big", bindings, push, groups, local, (8, 8, bk))
        return
    local, spec, (bm, bn) = gemm_tiles(rec.device, m, n, batch, rec.options)
    rec.dispatch("gemm", bindings, push, (cdiv(n, bn), cdiv(m, bm), batch), local, spec)


def _fold_inner(m, n, nb1, nb2, a_st, b_st, c_st, bias_st) -> tuple | None:
    """The inner batch dim folded into A's rows, where B and the bias are the same for each of its
    matrices and A's, C's and the bias's rows continue from one matrix into the next; the outer dim
    becomes the inner one. None where they do not."""
    if nb2 == 1 or b_st[3] != 0 or a_st[3] != m * a_st[0] or c_st[1] != m * n:
        return None
    if bias_st is not None and bias_st[3] != m * bias_st[0]:
        return None
    bias_st = None if bias_st is None else (bias_st[0], bias_st[1], 0, bias_st[2])
    return m * nb2, 1, nb1, (a_st[0], a_st[1], 0, a_st[2]), (b_st[0], b_st[1], 0, b_st[2]), (0, c_st[0]), bias_st


def fold_batch(device, options, m, n, k, nb1, nb2, a_st, b_st, c_st, bias_st) -> tuple:
    """(m, nb1, nb2, A, B, C and bias strides) with the batch dims that can be folded into the rows of
    A and C folded: a Linear layer over an image's rows (ConvNeXt's channels-last MLPs: 7 matrices
    of 7 rows at batch 1, whose 32-row blocks were 22% full and not split along K as one GEMM of 49
    rows is). Kept where the folded tiling would pass lavapipe's loop budget, and everywhere with the
    option "vulkan.fold_batch" False (A/B sweeps: tools/device_check.sh)."""
    folded = (m, nb1, nb2, a_st, b_st, c_st, bias_st)
    if str((options or {}).get("vulkan.fold_batch", True)).lower() in ("0", "false"):
        return folded
    for _ in range(2):
        inner = _fold_inner(folded[0], n, *folded[1:])
        if inner is None:
            break
        if _tile_too_long(device, inner[0], n, k, inner[1] * inner[2], options):
            break
        folded = inner
    return folded


def _gemm(rec, bindings, m, n, k, nb1, nb2, a_st, b_st, c_st, bias_st, alpha, beta, act, aa, ab):
    m, nb1, nb2, a_st, b_st, c_st, bias_st = fold_batch(
        rec.device, rec.options, m, n, k, nb1, nb2, a_st, b_st, c_st, bias_st
    )
    push = gemm_params(m, n, k, nb2, a_st, b_st, c_st, bias_st, alpha, beta, act, aa, ab)
    long_k = m <= GEMV_ROWS and _tile_too_long(rec.device, m, n, k, nb1 * nb2, rec.options)
    if long_k or use_gemv(rec.device, m, k, b_st[0], rec.options):  # m <= 8: never a tensor-core GEMM
        gx = min(n, MAX_GROUPS)
        rec.dispatch("gemv", bindings, push, (gx, cdiv(n, gx), nb1 * nb2), (GEMV_LOCAL, 1, 1))
        return
    from . import gemm_split

    tiling = gemm_split.warp_fill_plan(rec, m, n, k, nb1 * nb2, bias_st, beta)
    if tiling is not None:  # 128x128 blocks too few whole: in slices of K (vulkan.warp_splitk)
        gemm_split.record(rec, bindings, m, n, k, a_st, b_st, bias_st, alpha, act, aa, ab, tiling, "gemm_warp")
        return
    tiling = gemm_split.plan(rec, m, n, k, nb1 * nb2, bias_st, beta)
    if tiling is not None:  # too few blocks for the GPU: K in slices, then a sum
        gemm_split.record(rec, bindings, m, n, k, a_st, b_st, bias_st, alpha, act, aa, ab, tiling)
        return
    tiling = gemm_split.warp_plan(rec, m, n, k, nb1 * nb2, bias_st, beta)
    if tiling is not None:  # gemm_warp.comp's blocks in the slices asked for (sweeps)
        gemm_split.record(rec, bindings, m, n, k, a_st, b_st, bias_st, alpha, act, aa, ab, tiling, "gemm_warp")
        return
    dispatch_gemm(rec, bindings, push, m, n, nb1 * nb2, k)


def _record_gemm(op, rec):
    _gemm(rec, operand_bindings(op, rec, stand_in=0), *gemm_args(op))


register("MatMul", _record_matmul, _matmul_supports, efficiency=0.3)
register("Gemm", _record_gemm, _gemm_supports, efficiency=0.3)

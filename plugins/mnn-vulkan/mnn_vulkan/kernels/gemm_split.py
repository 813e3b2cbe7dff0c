"""Split-K for a GEMM of one batch (MatMul, Gemm, vulkan.FusedMatMul): where an output has too few
blocks to fill a GPU (a batch-1 transformer: BERT-base's 128 x 768 Linears are 48 blocks of 32x64
on a 132-SM H100), K is cut into equal slices and one gemm.comp dispatch computes every slice's
product into the segment's scratch, one slice per z (read through batch strides: slice s starts
s * chunk along K of A and of B), then splitk_reduce.comp (convolution's second pass) adds the
slices, the bias row or column and the activation. Each slice's K loop is short: a work group's
serial steps, not the GPU's width, bound such a GEMM.

It takes float32 sessions, a bias that is a row (per column) or a column (per row) added with
beta 1, and K divisible by the slice count (gemm.comp's bounds check is per slice). The option
"vulkan.gemm_splitk" (False) keeps every GEMM whole, for A/B sweeps (tools/sweep_tiling.py);
"vulkan.splitk" forces a count, as for convolutions (tests run it on lavapipe).
"""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.params import gemm_params, pack
from mnn_core.backend.kit.recorder import SCRATCH, Binding
from mnn_core.backend.kit.tiling import busiest_tile

OPTION = "vulkan.gemm_splitk"
#: the option of a work-group count at which a GEMM's blocks are taken to fill the GPU and it stays
#: whole (0, the default: split wherever split_k's rule says so; BERT-base b1's first MLP GEMM has
#: 192 blocks of 32x64 and is cut in 3). For the device's sweep (tools/device_check.sh), which
#: weighs the sums' dispatches (0.38 ms of BERT-base b1's 3.6 on the H100) against longer K loops
WHOLE_AT = "vulkan.splitk_whole_at"
#: consecutive split GEMMs take their partial sums from different thirds of the scratch, so that
#: independent ones (attention's q, k and v projections of one input) need no barrier between
#: them for reusing its bytes (the recorder puts one only where byte ranges meet)
RING = 3


def even_splits(device, groups: int, k: int, options: dict) -> int:
    """split_k's count for `groups` work groups, lowered to one that divides K."""
    from .matmul import split_k

    splits = split_k(device, groups, k, options)
    while splits > 1 and k % splits:
        splits -= 1
    return splits


def _bias_index(bias_st, m: int, n: int) -> tuple[int, int] | None:
    """(inner, period) of splitk_reduce.comp's bias index (i / inner) % period for output element
    i = row * n + column: a row added to every row (strides (0, 1)) or a column to every column
    ((1, 0)); None for any other layout."""
    return {(0, 1): (1, n), (1, 0): (n, m)}.get((bias_st[0], bias_st[1]))


def plan(rec, m: int, n: int, k: int, batch: int, bias_st, beta: float) -> tuple | None:
    """(local, spec, (BM, BN), splits) for a GEMM to cut along K, or None to keep it whole."""
    from .matmul import _gpu_knobs, big_gemm_local, gemm_tiles, is_gpu, use_coopmat

    options = rec.options or {}
    if batch != 1 or rec.half or k < 2 or str(options.get(OPTION, True)).lower() in ("0", "false"):
        return None
    if bias_st is not None and (beta != 1.0 or _bias_index(bias_st, m, n) is None):
        return None
    if not (options.get("vulkan.splitk") or is_gpu(rec.device, options)):
        return None
    if use_coopmat(rec, m, n) or big_gemm_local(rec, m, n, k, batch) is not None:
        return None
    from .gemm_narrow import choose

    if choose(rec, m, n, k, batch) is not None:  # warp tiles fill the GPU without a sum
        return None
    if options.get("vulkan.tiles"):
        local, spec, block = gemm_tiles(rec.device, m, n, 1, options)
    else:
        order, _, enough = _gpu_knobs(options, device=rec.device)
        local, spec, block = busiest_tile(m, n, 1, order, enough, lambda g: even_splits(rec.device, g, k, options))
    groups = cdiv(m, block[0]) * cdiv(n, block[1])
    if groups >= int(options.get(WHOLE_AT, 0) or 0) > 0:
        return None  # its blocks alone give that many work groups: no sum to pay for
    splits = even_splits(rec.device, groups, k, options)
    return (local, spec, block, splits) if splits > 1 else None


#: the option of a slice count for GEMMs on gemm_warp.comp's blocks (vulkan.big_gemm_shader=warp), for
#: the device's sweeps (tools/bench_gemm.py): against half-size blocks where 128x128 ones are too few
WARP_SPLITS = "vulkan.big_gemm_splitk"


def warp_plan(rec, m: int, n: int, k: int, batch: int, bias_st, beta: float) -> tuple | None:
    """(local, spec, (BM, BN), splits) for a GEMM on gemm_warp.comp's blocks cut into the slices
    "vulkan.big_gemm_splitk" asks for (lowered to a count that divides K), or None: not asked, or a
    GEMM split-K does not take (see plan) or that stays off gemm_warp.comp."""
    from .matmul import big_gemm_local, big_gemm_shader, warp_blocks, warp_spec

    options = rec.options or {}
    splits = int(options.get(WARP_SPLITS, 0) or 0)
    if splits < 2 or batch != 1 or rec.half or big_gemm_shader(options) != "warp":
        return None
    if bias_st is not None and (beta != 1.0 or _bias_index(bias_st, m, n) is None):
        return None
    local = big_gemm_local(rec, m, n, k, batch)
    if local is None:
        return None
    splits = min(splits, max(1, k // 16))
    while splits > 1 and k % splits:
        splits -= 1
    if splits < 2:
        return None
    local, warps_n = local
    spec = warp_spec(rec.device, options, local, warps_n, k // splits)
    return local, spec, warp_blocks(local, warps_n), splits


#: the option that cuts a GEMM of one batch whose 128x128 blocks are too few to be taken whole (ConvNeXt-T
#: b16's 784 x 768 down projections: 42) into 2-4 slices of K on them, instead of gemm.comp's split-K:
#: "auto" (on a GPU) or "0" (the default until the device has timed it)
WARP_FILL = "vulkan.warp_splitk"
#: the least K a slice keeps there, and the part of a wave of SMs the slices' work groups must reach
WARP_FILL_MIN_K = 256
WARP_FILL_WAVE = 0.9


def warp_fill_plan(rec, m: int, n: int, k: int, batch: int, bias_st, beta: float) -> tuple | None:
    """(local, spec, (128, 128), splits) for WARP_FILL's slices of K on gemm_warp.comp's 128x128 blocks:
    the fewest (2 to 4, dividing K, each at least WARP_FILL_MIN_K deep) whose work groups reach
    WARP_FILL_WAVE of the SMs; None where not asked, where the blocks are enough whole (gemm_narrow's
    threshold) or too few even split, or for a GEMM split-K does not take (see plan)."""
    from .gemm_narrow import GPU_SMS, MIN_WARPS_PER_SM, NARROW
    from .matmul import big_gemm_shader, is_gpu, option_text, warp_spec

    options = rec.options or {}
    if option_text(options, WARP_FILL, "MNN_VULKAN_WARP_SPLITK", "0") != "auto" or not is_gpu(rec.device, options):
        return None
    if batch != 1 or rec.half or big_gemm_shader(options) != "warp" or m < 128 or n < 128:
        return None
    if (
        options.get("vulkan.tiles")
        or option_text(options, "vulkan.big_gemm", "MNN_VULKAN_BIG_GEMM", "default") != "default"
    ):
        return None
    if bias_st is not None and (beta != 1.0 or _bias_index(bias_st, m, n) is None):
        return None
    sms = int(getattr(rec.device, "props", {}).get("sm_count", 0) or GPU_SMS)
    groups = cdiv(m, 128) * cdiv(n, 128)
    if groups * 8 >= MIN_WARPS_PER_SM * sms:
        return None
    _, local, warps_n, block = NARROW["128x128"]
    for splits in (2, 3, 4):
        if k % splits == 0 and k // splits >= WARP_FILL_MIN_K and groups * splits >= WARP_FILL_WAVE * sms:
            return local, warp_spec(rec.device, options, local, warps_n, k // splits), block, splits
    return None


def record(rec, bindings, m, n, k, a_st, b_st, bias_st, alpha, act, aa, ab, tiling, shader="gemm") -> None:
    """The two dispatches. bindings: [A, B, bias (or a stand-in), C]; alpha scales each slice; the
    slices' products on `shader` (gemm.comp, or gemm_warp.comp with warp_plan's tiling)."""
    local, spec, (bm, bn), splits = tiling
    chunk = k // splits
    a, b, bias, c = bindings
    total = m * n
    a_split = (a_st[0], a_st[1], chunk * a_st[1], 0)  # z = slice: batch stride = chunk along K
    b_split = (b_st[0], b_st[1], chunk * b_st[0], 0)
    push = gemm_params(m, n, chunk, 1, a_split, b_split, (total, 0), None, alpha, 0.0, 0, 0.0, 0.0)
    nbytes = splits * total * 4
    slot = getattr(rec, "split_gemms", 0)
    rec.split_gemms = slot + 1
    align = max(256, int(getattr(rec.device, "props", {}).get("min_storage_align", 0) or 0))
    offset = (slot % RING) * (-(-nbytes // align) * align)
    rec.scratch(offset + nbytes, written=True)  # sizes the scratch buffer
    partial = Binding(SCRATCH, offset, nbytes, True)
    rec.dispatch(shader, [a, b, a, partial], push, (cdiv(n, bn), cdiv(m, bm), splits), local, spec)
    inner, period = (1, 1) if bias_st is None else _bias_index(bias_st, m, n)
    push = pack(total, splits, inner, period, int(bias_st is not None), act, aa, ab)
    rec.elementwise("splitk_reduce", [Binding(SCRATCH, offset, nbytes), bias, c], push, total)

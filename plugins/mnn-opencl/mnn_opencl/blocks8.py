"""When a product or a convolution runs on kernels/gemm8.cl's 8x8 register blocks (gemm8_<name>,
conv8_<name>), and on which block size.

By default on GPUs: 128x128 blocks of the output where they give at least half as many work-groups
as the device has compute units (mnn-vulkan's rule for gemm_big.comp, measured on the H100), else
64x128 blocks where those do, else 128x64 ones; else the previous kernels (gemm.cl's tiles, conv.cl's direct ones),
which also split small layers along K. A convolution whose 64x128 blocks are still too few splits K
into slices instead (conv.cl's splitk_reduce adds them). CPU devices keep the previous kernels: PoCL
runs 256 work-items between barriers one after another.

The session option "opencl.gemm8" (or $MNN_OPENCL_GEMM8): "auto" (the above), "off" (never: the
previous kernels, for A/B runs), or a block name of BLOCKS forced wherever it applies (any device).

"opencl.conv4" (or $MNN_OPENCL_CONV4) puts one-group convolutions on kernels/conv4.cl's 64x64 blocks
of 4x4 tiles instead (mnn-vulkan's conv2d.comp, its fastest 3x3s on the H100), K split where the
blocks are few (CONV4_SPLIT_OPTION): "auto" (the default) every one on a GPU, "all" every one on any
device, "3x3" those with a window larger than 1x1, "off" none (conv8 as above)."""

from __future__ import annotations

import os

#: name: (work-group TX x TY, block rows BM x columns BN); every work-item computes 8x8 outputs
#: (in the order tried; "n64" for outputs 64 to 127 wide: attention's scores @ V, a head of 64;
#: "n96" for outputs a multiple of 96 wide, where N96_OPTION asks: ConvNeXt's down projections, 96 and
#: 192 wide, which 128-wide blocks cover a quarter or a third idle)
BLOCKS = {
    "b128": ((16, 16, 1), (128, 128)),
    "b64": ((16, 8, 1), (64, 128)),
    "n64": ((8, 16, 1), (128, 64)),
    "n96": ((12, 16, 1), (128, 96)),
}
N96_OPTION = "opencl.gemm8_n96"  # "on": 128x96 blocks for outputs a multiple of 96 but not of 128 wide
OPTION = "opencl.gemm8"
ENV = "MNN_OPENCL_GEMM8"
SLICES_OPTION = "opencl.gemm8_slices"  # a convolution's K slices, forced (tests)
#: the work-groups 128x128 blocks must give before taken (default: enough_groups), for A/B runs of
#: the threshold (e.g. 198, one and a half waves of an H100's 132 compute units: 64x128 blocks more often)
B128_MIN_OPTION = "opencl.gemm8_b128_min"
#: a product's K slices (one batch only): "0" or absent (whole; the default), "fill" (gemm_slices' rule),
#: or a count (forced; tests)
SPLITK_OPTION = "opencl.gemm8_splitk"
FILL_WAVES = 1.5  # "fill": slices until the work-groups reach this many per compute unit
MAX_SLICES = 16
MIN_SLICE_K = 256  # a K slice shorter than this costs more in partial sums than it gains


#: conv4_<name>: (work-group TX x TY, block rows BM x columns BN); every work-item computes 4x4 outputs
CONV4_BLOCKS = {"c64": ((16, 16, 1), (64, 64))}
CONV4_OPTION = "opencl.conv4"
CONV4_ENV = "MNN_OPENCL_CONV4"
#: conv4's K split: by default (as conv8's) where the blocks give fewer work-groups than half the compute
#: units, until one per compute unit; CONV4_SPLIT_OPTION "wave" takes mnn-vulkan's rule instead (below
#: half of CONV4_WAVES work-groups per compute unit, up to that many, slices >= CONV4_MIN_SLICE_K deep:
#: ResNet-50's 128- to 512-channel 3x3s at batch 16 in 3 to 11 slices), not yet timed here
CONV4_SPLIT_OPTION = "opencl.conv4_split"
CONV4_WAVES = 8
CONV4_MIN_SLICE_K = 128


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _wanted(b) -> str:
    value = str(b.options.get(OPTION, os.environ.get(ENV, "auto")) or "auto").lower()
    if value not in ("auto", "off", *BLOCKS):
        raise ValueError(f"{OPTION} must be auto, off or one of {', '.join(BLOCKS)}, got {value!r}")
    return value


def groups(name: str, m: int, n: int, batches: int = 1) -> int:
    """Work-groups of an M x N output (`batches` times) in `name`'s blocks."""
    _, (bm, bn) = BLOCKS[name]
    return cdiv(m, bm) * cdiv(n, bn) * batches


def enough_groups(b) -> int:
    """Half the compute units: 66 on an H100."""
    return max(1, int(b.runtime.entry.device["compute_units"]) // 2)


def choose(b, m: int, n: int, batches: int = 1) -> str | None:
    """The block name for an M x N output `batches` times, or None (the previous kernels)."""
    wanted = _wanted(b)
    if wanted == "off":
        return None
    if wanted != "auto":
        return wanted
    if not b.runtime.is_gpu:
        return None
    enough = enough_groups(b)
    n96 = str(b.options.get(N96_OPTION, "off") or "off").lower()
    if n96 not in ("on", "off"):
        raise ValueError(f"{N96_OPTION} must be on or off, got {n96!r}")
    if n96 == "on" and n % 96 == 0 and n % 128 and m >= 128 and groups("n96", m, n, batches) >= enough:
        return "n96"
    minimum = {"b128": int(b.options.get(B128_MIN_OPTION, 0) or enough), "b64": enough, "n64": enough, "n96": 1 << 30}
    for name, (_, (bm, bn)) in BLOCKS.items():
        if m >= bm and n >= bn and groups(name, m, n, batches) >= minimum[name]:
            return name
    return None


def conv4_choice(b, m: int, n: int, k: int, window: bool) -> tuple[str, int] | None:
    """("c64", K slices) where CONV4_OPTION puts this convolution (`window`: larger than 1x1) on
    conv4's blocks, else None. On a GPU, K is split where the blocks give fewer than half of
    CONV4_WAVES work-groups per compute unit."""
    value = str(b.options.get(CONV4_OPTION, os.environ.get(CONV4_ENV, "auto")) or "auto").lower()
    if value not in ("auto", "off", "3x3", "all"):
        raise ValueError(f"{CONV4_OPTION} must be auto, off, 3x3 or all, got {value!r}")
    if value == "off" or (value == "3x3" and not window):
        return None
    if value == "auto" and (not b.runtime.is_gpu or _wanted(b) in BLOCKS):  # conv8 blocks forced: theirs
        return None
    forced = int(b.options.get(SLICES_OPTION, 0) or 0)
    if forced:
        return "c64", max(1, min(forced, k))
    _, (bm, bn) = CONV4_BLOCKS["c64"]
    have = cdiv(m, bm) * cdiv(n, bn)
    units = int(b.runtime.entry.device["compute_units"])
    if str(b.options.get(CONV4_SPLIT_OPTION, "fill") or "fill").lower() == "wave":
        wave = CONV4_WAVES * units
        if not b.runtime.is_gpu or 2 * have >= wave:
            return "c64", 1
        return "c64", max(1, min(MAX_SLICES, cdiv(wave, have), k // CONV4_MIN_SLICE_K))
    if not b.runtime.is_gpu or have >= enough_groups(b):
        return "c64", 1
    return "c64", max(1, min(MAX_SLICES, cdiv(units, have), k // MIN_SLICE_K))


def conv_choice(b, m: int, n: int, k: int, window: bool = True) -> tuple[str, int] | None:
    """(block name, K slices) for a convolution of M output channels over N output pixels (all
    images) and K = C*KH*KW, or None (conv.cl's kernels): conv4's blocks where CONV4_OPTION asks,
    else conv8's. Where even 64x128 blocks give too few work-groups on a GPU, K is split until they
    give one per compute unit."""
    if (small := conv4_choice(b, m, n, k, window)) is not None:
        return small
    name = choose(b, m, n)
    forced = int(b.options.get(SLICES_OPTION, 0) or 0)
    if name is not None:
        return name, max(1, min(forced, k))
    if _wanted(b) != "auto" or not b.runtime.is_gpu or m < 64 or n < 128:
        return None
    have = groups("b64", m, n)
    slices = min(MAX_SLICES, cdiv(int(b.runtime.entry.device["compute_units"]), have), k // MIN_SLICE_K)
    return ("b64", slices) if slices > 1 else None


def gemm_slices(b, name: str, m: int, n: int, k: int) -> int:
    """K slices of an M x N x K product on `name`'s blocks: 1 unless SPLITK_OPTION asks. "fill": enough
    slices (up to MAX_SLICES, each at least MIN_SLICE_K deep) for FILL_WAVES work-groups per compute
    unit, where the blocks alone give fewer."""
    wanted = str(b.options.get(SPLITK_OPTION, "0") or "0").lower()
    if wanted == "fill":
        have = groups(name, m, n)
        target = int(FILL_WAVES * int(b.runtime.entry.device["compute_units"]))
        return max(1, min(MAX_SLICES, cdiv(target, have), k // MIN_SLICE_K)) if have < target else 1
    return max(1, min(int(wanted), max(k, 1)))

"""The tiled convolution (conv2d_tiled.comp): an implicit GEMM, output channels x output
pixels, with K = C/group * KH * KW staged through shared memory in BK slices. Its tilings
are mnn-vulkan's (a work group of TX x TY invocations, TM x TN outputs each, BK deep);
`tiling` picks one per layer, `record` dispatches it. conv.py decides where it runs."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.tiling import blocks, busiest_tile

from ..recorder import MAX_GROUPS

#: (local size (TX, TY), (TM, TN, BK)): blocks of 64x64, 32x64, 32x32 and 16x16 outputs
BIG = ((16, 16), (4, 4, 16))
WIDE = ((16, 16), (2, 4, 16))
MID = ((16, 16), (2, 2, 16))
ONE = ((16, 16), (1, 1, 16))
#: 64 invocations, 32x32 outputs: a CPU device's tile where BIG leaves its cores idle
SMALL = ((8, 8), (4, 4, 16))
TILES = {"big": BIG, "wide": WIDE, "mid": MID, "one": ONE, "small": SMALL}
#: shared memory every GLES 3.1 device offers a work group
SHARED_BYTES = 16384
#: work groups below which a GPU takes the next smaller tiling (mnn-vulkan's GPU_ENOUGH)
GPU_ENOUGH = 180


def parse_tiles(text: str):
    """A name of TILES or "TXxTYxTMxTNxBK" (e.g. "16x16x2x2x16"), for tests and sweeps."""
    if text in TILES:
        return TILES[text]
    try:
        tx, ty, tm, tn, bk = (int(v) for v in str(text).split("x"))
    except ValueError:
        raise ValueError(
            f"opengl.conv_tiles must be one of {', '.join(TILES)} or TXxTYxTMxTNxBK, got {text!r}"
        ) from None
    shared = 4 * bk * (ty * tm + tx * tn + 2)
    if tx * ty > 1024 or min(tx, ty, tm, tn, bk) < 1 or tm * tn > 64 or ty % tn or shared > SHARED_BYTES:
        raise ValueError(
            f"opengl.conv_tiles {text!r}: at most 1024 invocations, 64 outputs each, TY a multiple of TN, "
            f"{SHARED_BYTES} bytes of staged tiles (4 * BK * (BM + BN + 2))"
        )
    return (tx, ty), (tm, tn, bk)


def tiling(og: int, cols: int, groups: int, gpu: bool, forced=None, max_invocations: int = 1024):
    """(local, (TM, TN, BK)) for an og x cols output per group. On a GPU, as mnn-vulkan: the
    largest of BIG, WIDE, MID, ONE that still gives GPU_ENOUGH work groups. On a CPU device
    (llvmpipe), BIG where its 64x64 blocks fit and give each core work, else SMALL. SMALL too
    where a device runs fewer than 256 invocations per work group (GLES 3.1 promises 128)."""
    if forced:
        return parse_tiles(forced)
    if max_invocations < 256:
        return SMALL
    if gpu:
        local, spec, _ = busiest_tile(og, cols, groups, [BIG, WIDE, MID, ONE], GPU_ENOUGH)
        return local, spec
    bm, bn = blocks(*BIG)
    if bm <= og and bn <= cols and cdiv(og, bm) * cdiv(cols, bn) * groups >= 8:
        return BIG
    return SMALL


def grid(og: int, cols: int, groups: int, tiles) -> tuple[int, int, int]:
    bm, bn = blocks(*tiles)
    return cdiv(cols, bn), cdiv(og, bm), groups


def fits(og: int, cols: int, groups: int, tiles) -> bool:
    """Whether the dispatch stays within the work-group counts every GL device allows."""
    return max(grid(og, cols, groups, tiles)) <= MAX_GROUPS


def loop_passes(k: int, tiles) -> int:
    """Loop passes of one invocation (llvmpipe's budget): per BK slice the slice loop, the two
    staging loops and the multiply's loop over the slice, counted twice (llvmpipe unrolls the
    loops over TM and TN but counted about BK + 20 per slice with SMALL, measured on K = 27000
    and 31500: not published, so with room)."""
    (tx, ty), (tm, tn, bk) = tiles
    nt = tx * ty
    per_slice = 1 + cdiv(bk * ty * tm, nt) + cdiv(bk, nt // (tx * tn)) + 2 * bk
    return cdiv(k, bk) * per_slice + 2 * tm * tn + tm * (tn + 1)


def k_table(c: int, h: int, w: int, kh: int, kw: int, dh: int, dw: int) -> list[int]:
    """Per k = (channel, ky, kx) of a group: the input offset from the window's corner and (dy, dx)."""
    table = []
    for ch in range(c):
        for ky in range(kh):
            for kx in range(kw):
                dy, dx = ky * dh, kx * dw
                table += [ch * h * w + dy * w + dx, dy, dx]
    return table


def record(rec, x, w, bias, y, x_shape, geo, act, tiles, elem) -> None:
    """One conv2d_tiled.comp dispatch: `x_shape` NCHW, `geo` conv_geometry's, `act`
    activation_code's (code, alpha, beta), `elem` a tensor's arena offset."""
    n, c, h, wd = x_shape
    _, o, oh, ow = geo["out"]
    g = geo["group"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    cg = c // g
    params = [n, c, h, wd, o, oh, ow, sh, sw, geo["pads"][0], geo["pads"][1], g, cg * kh * kw]
    params += [elem(x), elem(w), elem(bias) if bias is not None else -1, elem(y), *act]
    params += k_table(cg, h, wd, kh, kw, dh, dw)
    local, (tm, tn, bk) = tiles
    rec.dispatch(
        "conv2d_tiled",
        params,
        [x, w, bias],
        [y],
        grid(o // g, n * oh * ow, g, tiles),
        local,
        (("TM", tm), ("TN", tn), ("BK", bk)),
    )

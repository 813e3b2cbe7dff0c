"""The tiled convolution (conv2d_tiled.comp): an implicit GEMM, output channels x output
pixels, with K = C/group * KH * KW staged through shared memory in BK slices. Its tilings
are mnn-vulkan's (a work group of TX x TY invocations, TM x TN outputs each, BK deep);
`tiling` picks one per layer, `split_k` how many slices of K a small output is cut into
(summed by splitk_reduce.comp), `record` dispatches them. conv.py decides where it runs;
`gemm` runs a MatMul on it as a 1x1 convolution (matmul.py)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.tiling import blocks, busiest_tile

from ..recorder import MAX_GROUPS
from .loops import within_budget

#: (local size (TX, TY), (TM, TN, BK)): blocks of 64x64, 32x64, 32x32 and 16x16 outputs
BIG = ((16, 16), (4, 4, 16))
WIDE = ((16, 16), (2, 4, 16))
MID = ((16, 16), (2, 2, 16))
ONE = ((16, 16), (1, 1, 16))
#: 64 invocations, 32x32 outputs: a CPU device's tile where BIG leaves its cores idle
SMALL = ((8, 8), (4, 4, 16))
TILES = {"big": BIG, "wide": WIDE, "mid": MID, "one": ONE, "small": SMALL}
#: work groups that keep a discrete GPU busy: split-K cuts K until a layer gives about this
#: many (mnn-vulkan's GPU_WAVE)
GPU_WAVE = 1056
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


def tiling(og: int, cols: int, groups: int, gpu: bool, forced=None, max_invocations: int = 1024, k: int = 0):
    """(local, (TM, TN, BK)) for an og x cols output per group. On a GPU, as mnn-vulkan: the
    largest of BIG, WIDE, MID, ONE that still gives GPU_ENOUGH work groups, counting those
    split-K adds over a K of `k`. On a CPU device
    (llvmpipe), BIG where its 64x64 blocks fit and give each core work, else SMALL. SMALL too
    where a device runs fewer than 256 invocations per work group (GLES 3.1 promises 128)."""
    if forced:
        return parse_tiles(forced)
    if max_invocations < 256:
        return SMALL
    if gpu:
        more = (lambda count: split_k(count, k, gpu)) if k else None
        local, spec, _ = busiest_tile(og, cols, groups, [BIG, WIDE, MID, ONE], GPU_ENOUGH, more)
        return local, spec
    bm, bn = blocks(*BIG)
    if bm <= og and bn <= cols and cdiv(og, bm) * cdiv(cols, bn) * groups >= 8:
        return BIG
    return SMALL


def split_k(groups: int, k: int, gpu: bool, forced=None) -> int:
    """Slices of K for a layer of `groups` work groups: on a GPU enough to give about GPU_WAVE,
    each keeping 256 or more of K, at most 16; 1 on a CPU device. `forced` sets the count."""
    if forced:
        return max(1, min(int(forced), cdiv(k, 16)))
    if not gpu or groups == 0 or groups * 2 >= GPU_WAVE:
        return 1
    return max(1, min(cdiv(GPU_WAVE, groups), k // 256, 16))


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


def record(rec, x, w, bias, y, x_shape, geo, act, tiles, elem, splits: int = 1, shader: str = "conv2d_tiled") -> None:
    """One conv2d_tiled.comp dispatch, or with `splits` > 1 one that sums each slice of K into
    scratch words and a splitk_reduce.comp one: `x_shape` NCHW, `geo` conv_geometry's, `act`
    activation_code's (code, alpha, beta), `elem` a tensor's arena offset. `shader`
    "conv2d_blk" (same parameters) takes BIG tiles only."""
    n, c, h, wd = x_shape
    _, o, oh, ow = geo["out"]
    g = geo["group"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    cg = c // g
    k = cg * kh * kw
    local, (tm, tn, bk) = tiles
    chunk = cdiv(cdiv(k, splits), bk) * bk  # K per slice, in whole BK steps
    splits = cdiv(k, chunk)
    total = n * o * oh * ow
    scratch = rec.scratch(splits * total) if splits > 1 else 0
    params = [n, c, h, wd, o, oh, ow, sh, sw, geo["pads"][0], geo["pads"][1], g, k]
    params += [elem(x), elem(w), elem(bias) if bias is not None else -1, elem(y), *act, splits, chunk, scratch]
    params += k_table(cg, h, wd, kh, kw, dh, dw)
    gx, gy, _ = grid(o // g, n * oh * ow, g, tiles)
    defines = (("TM", tm), ("TN", tn), ("BK", bk))
    if splits == 1:
        rec.dispatch(shader, params, [x, w, bias], [y], (gx, gy, g), local, defines)
        return
    split_defines = defines + (("SPLIT_K", 1), ("PARAMS_RW", 1))
    rec.dispatch(shader, params, [x, w], [], (gx, gy, g * splits), local, split_defines)
    reduce = [total, splits, oh * ow, o, elem(bias) if bias is not None else -1, elem(y), *act, scratch]
    rec.elementwise("splitk_reduce", reduce, [bias], [y], total, barrier=True)


def gemm(rec, a, b, y, batch: int, rows: int, k: int, n: int, act, elem, gpu: bool) -> bool:
    """Y (batch x rows x n) = A (batch x rows x k) @ B (batch x k x n), all contiguous, as a 1x1
    convolution of `batch` groups: A's rows are its weights, B a (1, batch*k, 1, n) image.
    False where the tiled shader does not take it (fewer than 8 rows, too many groups)."""
    options = rec.options
    tiles = tiling(
        rows, n, batch, gpu, options.get("opengl.conv_tiles"), rec.device.props.get("max_invocations", 128), k
    )
    if rows < 8 or not fits(rows, n, batch, tiles) or within_budget(loop_passes(k, tiles), "") is not True:
        return False
    gx, gy, _ = grid(rows, n, batch, tiles)
    splits = split_k(gx * gy * batch, k, gpu, options.get("opengl.splitk"))
    splits = 1 if batch * splits > MAX_GROUPS else splits
    geo = dict(out=(1, batch * rows, 1, n), group=batch, kernel=(1, 1), strides=(1, 1), dilations=(1, 1))
    geo["pads"] = (0, 0, 0, 0)
    record(rec, b, a, None, y, (1, batch * k, 1, n), geo, act, tiles, elem, splits)
    return True

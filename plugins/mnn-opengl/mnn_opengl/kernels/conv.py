"""2-D convolution: where a group has 8 or more output channels, a shared-memory tiled implicit
GEMM (conv_tiled.py): conv2d_blk.comp (64x64 blocks, each invocation's 4x4 tile in vec4
registers) on llvmpipe, conv2d_tiled.comp (per-layer tilings) on GPUs. Elsewhere
(depthwise, narrow groups) conv2d.comp, a direct convolution of 1x1, 3x3, depthwise and the
general case (stride, padding, dilation, group) in one shader, each invocation a register tile
of OUT_C output channels by OUT_X output columns (see tile()). All fuse bias and activation; a
1-D convolution runs as 2-D over a single row."""

from __future__ import annotations

from mnn_core.backend.kit.codes import activation_code
from mnn_core.backend.kit.geometry import conv_geometry

from ..recorder import MAX_GROUPS, element
from . import conv_tiled, register
from .loops import budgeted, within_budget


def _supports(node, ins):
    if len(ins[0].shape) not in (3, 4):
        return f"1-D and 2-D convolution only (NCL or NCHW input), got rank {len(ins[0].shape)}"
    return True


def as_2d(x_shape, w_shape, attrs):
    """A 1-D convolution's shapes and attributes as those of a 2-D one over a (1, L) image."""
    if len(x_shape) == 4:
        return tuple(x_shape), tuple(w_shape), attrs
    out = dict(attrs)
    for key in ("strides", "dilations", "kernel_shape"):
        if attrs.get(key):
            out[key] = [1, *attrs[key]]
    if attrs.get("pads"):
        out["pads"] = [0, attrs["pads"][0], 0, attrs["pads"][1]]
    return (*x_shape[:2], 1, x_shape[2]), (*w_shape[:2], 1, w_shape[2]), out


#: invocations a GPU's convolution should have at least: with fewer, the register tile shrinks
GPU_INVOCATIONS = 1 << 17


def tile(per_group: int, ow: int, forced=None, gpu_work=None) -> tuple[int, int]:
    """(OUT_C, OUT_X): 8 channels where a group has 8, 4 where it has 4, else 1 (depthwise),
    by 4 columns where the output is 4 wide (8x4 ran a 3x3 64->64 convolution 1.3x faster than
    4x4 on llvmpipe). On a GPU (`gpu_work(out_c, out_x)`: the invocations a tile gives) the
    largest of 4x4, 2x2 that still gives GPU_INVOCATIONS, else 1x1: on the H200 every layer at
    1x1 ran ResNet-18 at batch 1 in 10.8 ms against 26.9 with 8x4 (too few invocations to
    fill the GPU), and 4x4 was best at batch 16 (benchmarks/h200_sweep.sh). The session
    option "opengl.conv_tile" = (c, x) forces them."""
    if forced:
        return int(forced[0]), int(forced[1])
    if gpu_work is not None:
        for c, x in ((4, 4), (2, 2)):
            c, x = min(c, per_group), min(x, ow)
            if gpu_work(c, x) >= GPU_INVOCATIONS:
                return c, x
        return 1, 1
    return (8 if per_group >= 8 else 4 if per_group >= 4 else 1), (4 if ow >= 4 else 1)


def _record(op, rec):
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    x_shape, w_shape, attrs = as_2d(x.info.shape, w.info.shape, op.node.attrs)
    geo = conv_geometry(x_shape, w_shape, attrs)
    n, c, h, wd = x_shape
    _, o, oh, ow = geo["out"]
    g = geo["group"]

    def invocations(out_c, out_x):
        return n * g * -(-(o // g) // out_c) * oh * -(-ow // out_x)

    gpu = rec.device.info().kind == "gpu" or bool(rec.options.get("opengl.gpu_tiling"))  # (option: tests)
    limit = rec.device.props.get("max_invocations", 128)
    chosen = _tiled(rec.options, o // g, c // g, w_shape[2], w_shape[3], n * oh * ow, g, gpu, limit)
    if chosen is not None:
        tiles, shader = chosen
        act = activation_code(op.node.attrs)
        gx, gy, _ = conv_tiled.grid(o // g, n * oh * ow, g, tiles)
        splits = conv_tiled.split_k(
            gx * gy * g, c // g * w_shape[2] * w_shape[3], gpu, rec.options.get("opengl.splitk")
        )
        if g * splits > MAX_GROUPS:
            splits = 1
        conv_tiled.record(rec, x, w, bias, y, x_shape, geo, act, tiles, element, splits, shader)
        return
    out_c, out_x = tile(o // g, ow, rec.options.get("opengl.conv_tile"), invocations if gpu else None)
    total = invocations(out_c, out_x)
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    params = [
        n,
        c,
        h,
        wd,
        o,
        oh,
        ow,
        kh,
        kw,
        sh,
        sw,
        geo["pads"][0],
        geo["pads"][1],
        dh,
        dw,
        g,
        element(x),
        element(w),
        element(bias) if bias is not None else -1,
        element(y),
        activation_code(op.node.attrs),
    ]
    rec.elementwise("conv2d", params, [x, w, bias], [y], total, defines=(("OUT_C", out_c), ("OUT_X", out_x)))


def _tiled(options, og, cg, kh, kw, cols, g, gpu, max_invocations):
    """(tiling, shader) of the tiled product for this layer, or None for the direct shader.
    On a CPU device (llvmpipe) conv2d_blk.comp where its 64x64 blocks fit: one barrier a slice
    (conv2d_tiled.comp's two made the direct shader faster there on every layer tried); elsewhere
    the direct one, conv2d_tiled.comp taking only what the direct one's loops cannot finish. A GPU
    runs conv2d_tiled.comp's tilings (conv_tiled.tiling; conv2d_blk.comp is not timed on one yet).
    Depthwise and other groups of under 8 channels stay direct (a GEMM tile
    would be mostly empty). "opengl.conv_path" ("tiled", "blk", "direct") forces the choice
    where the layer allows it, "opengl.conv_tiles" a tiling of conv2d_tiled.comp
    (conv_tiled.TILES), "opengl.splitk" the slices of K (split-K)."""
    path = options.get("opengl.conv_path")
    if path not in (None, "tiled", "direct", "blk"):
        raise ValueError(f'opengl.conv_path must be "tiled", "blk" or "direct", got {path!r}')
    if path == "direct" or og < 8:
        return None
    k = cg * kh * kw
    big = conv_tiled.BIG
    blk = max_invocations >= 256 and conv_tiled.fits(og, cols, g, big) and _in_budget(conv_tiled.loop_passes(k, big))
    forced = options.get("opengl.conv_tiles") or (path is None and options.get("opengl.conv_tile"))
    if blk and not forced and (path == "blk" or (path is None and not gpu)):
        return big, "conv2d_blk"
    tiles = conv_tiled.tiling(og, cols, g, gpu, options.get("opengl.conv_tiles"), max_invocations, k)
    if not _in_budget(conv_tiled.loop_passes(k, tiles)):
        tiles = conv_tiled.SMALL  # what the Conv's loop-budget check counted
    if not conv_tiled.fits(og, cols, g, tiles) or not _in_budget(conv_tiled.loop_passes(k, tiles)):
        return None
    if path in ("tiled", "blk") or gpu or not _in_budget(direct_passes(cg, kh, kw)):
        return tiles, "conv2d_tiled"
    return None


def _in_budget(passes: int) -> bool:
    return within_budget(passes, "") is True


def direct_passes(cg: int, kh: int, kw: int) -> int:
    """Loop passes of one conv2d.comp invocation: its channels x kernel rows x kernel columns (as
    llvmpipe counts them: a 1x1 kernel costs 6 passes a channel, a 3x3 one 18)."""
    return cg * (kh * (kw + 2) + 3) + 16


def window_passes(node, ins) -> int:
    """Loop passes of one invocation: of conv2d.comp (channels x kernel rows x kernel columns),
    or of conv2d_tiled.comp's smallest tiling where it is shorter and takes the layer."""
    w = ins[1].shape
    kh, kw = (w[2], w[3]) if len(w) == 4 else (1, w[2])
    direct = direct_passes(w[1], kh, kw)
    if w[0] // (node.attrs.get("group") or 1) < 8:
        return direct
    return min(direct, conv_tiled.loop_passes(w[1] * kh * kw, conv_tiled.SMALL))


register("Conv", _record, budgeted(_supports, window_passes), efficiency=0.4)

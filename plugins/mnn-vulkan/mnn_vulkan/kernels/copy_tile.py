"""Transposes of 32-bit elements through 32x32 tiles in shared memory (copy_tile_t.comp), where the
output's innermost axis is strided in the input and another axis is contiguous there (ConvNeXt's
NCHW <-> NHWC): copy.comp reads or writes such a copy with a stride, a warp touching 32 lines for
one. Up to two other (outer) axes ride on the grid's z. vulkan.TransposedBinary's Add of such a
Transpose and a tensor laid out as the output (ConvNeXt's block ends) takes copy_tile_add.comp.

The option "vulkan.copy_tiles" (or MNN_VULKAN_COPY_TILES): "1" (on any device), "0" (copy.comp, the
default until a GPU has timed the tiles), "gpu" (on a GPU only)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv, collapse
from mnn_core.backend.kit.params import pack

OPTION = "vulkan.copy_tiles"
#: the least rows and columns a copy must have for its tiles to be worth a shared-memory pass
MIN_SIDE = 8


def plan(shape, src_strides, dst_strides) -> tuple | None:
    """(rows, cols, src stride of a column, dst stride of a row, outer sizes, their src and dst strides)
    of a copy in elements, or None where it is no such transpose (or has more than two outer axes)."""
    dims, (ss, ds) = collapse(shape, src_strides, dst_strides)
    if len(dims) < 2 or len(dims) > 4 or ds[-1] != 1 or ss[-1] == 1:
        return None
    r = next((i for i in range(len(dims) - 1) if ss[i] == 1), None)
    if r is None or dims[r] < MIN_SIDE or dims[-1] < MIN_SIDE:
        return None
    outer = [i for i in range(len(dims) - 1) if i != r]
    sizes = [dims[i] for i in outer] + [1] * (2 - len(outer))
    if sizes[0] * sizes[1] > 65535:
        return None
    src_o = [ss[i] for i in outer] + [0] * (2 - len(outer))
    dst_o = [ds[i] for i in outer] + [0] * (2 - len(outer))
    return dims[r], dims[-1], ss[-1], ds[r], sizes, src_o, dst_o


def takes(rec, words: int) -> bool:
    """Whether a copy of `words`-word elements may take copy_tile_t.comp in this session."""
    from .matmul import is_gpu, option_text

    options = rec.options or {}
    value = option_text(options, OPTION, "MNN_VULKAN_COPY_TILES", "0")
    if value in ("0", "false", "off"):
        return False
    if value not in ("gpu", "1", "true", "on"):
        raise ValueError(f"{OPTION} must be 1, gpu or 0, got {value!r}")
    return words == 1 and (value != "gpu" or is_gpu(rec.device, options))


def record(rec, src, dst, tiled: tuple, addend=None) -> None:
    """copy_tile_t.comp over plan()'s copy; with `addend` (float32, laid out as dst) copy_tile_add.comp,
    which adds it as it stores."""
    rows, cols, s_c, d_r, sizes, src_o, dst_o = tiled
    push = pack(rows, cols, s_c, d_r, sizes[1], src_o[0], src_o[1], dst_o[0], dst_o[1])
    shader, bindings = ("copy_tile_t", [src, dst]) if addend is None else ("copy_tile_add", [src, dst, addend])
    rec.dispatch(shader, bindings, push, (cdiv(cols, 32), cdiv(rows, 32), sizes[0] * sizes[1]), (32, 8, 1))

"""vulkan.TransposedBinary (fuse.py proposes it): a float32 binary op (Add, Mul, ...) that reads an
operand through the strides of the Transpose it replaces: binary.comp walks each input by its own
per-dimension strides, so a permuted read costs nothing and the Transpose's pass over memory goes
(ConvNeXt's channels-last block output added back to its channels-first residual).

Inputs: the two operands (a replaced Transpose's input in its place); attrs["op"]: the binary op,
attrs["perm_a"] / ["perm_b"]: the permutation the replaced Transpose applied to that operand.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnn_core.backend.kit.codes import BINARY
from mnn_core.backend.kit.layout import collapse, contiguous_strides, numel
from mnn_core.backend.kit.params import pack, pad6

from ..recorder import HALF_OPS
from . import register

TRANSPOSED_BINARY = "vulkan.TransposedBinary"
MAX_DIMS = 6  # binary.comp's


def operand_strides(shape: Sequence[int], perm: Sequence[int] | None, out_shape: Sequence[int]) -> list[int]:
    """Element strides over `out_shape` of an operand of `shape` (contiguous) read through a
    Transpose's `perm` (None: as it is), 0 where it broadcasts."""
    strides = contiguous_strides(tuple(shape))
    if perm is not None:
        shape, strides = [shape[p] for p in perm], [strides[p] for p in perm]
    pad = len(out_shape) - len(shape)
    padded = [1] * pad + list(shape)
    return [0 if d == 1 and o != 1 else s for d, o, s in zip(padded, out_shape, [0] * pad + list(strides))]


def plan(out_shape, a_shape, perm_a, b_shape, perm_b) -> tuple | None:
    """(dims, A strides, B strides) collapsed for binary.comp, or None past its 6 dims."""
    dims, (sa, sb) = collapse(
        out_shape, operand_strides(a_shape, perm_a, out_shape), operand_strides(b_shape, perm_b, out_shape)
    )
    if len(dims) > MAX_DIMS:
        return None
    return (dims, sa, sb) if dims else ([1], [0], [0])


def _tiled(op, rec) -> tuple | None:
    """(transposed operand, the other, copy_tile.plan) for an Add of a tensor laid out as the output and
    one read through a Transpose that copy_tile_t.comp takes (ConvNeXt's block ends), or None."""
    from . import copy_tile

    attrs = op.node.attrs
    a, b = op.inputs
    y = op.outputs[0]
    perm_a, perm_b = attrs.get("perm_a"), attrs.get("perm_b")
    if attrs["op"] != "Add" or rec.half or (perm_a is None) == (perm_b is None):
        return None
    moved, kept, perm = (a, b, perm_a) if perm_a is not None else (b, a, perm_b)
    if tuple(kept.info.shape) != tuple(y.info.shape) or numel(moved.info.shape) != numel(y.info.shape):
        return None
    if not copy_tile.takes(rec, 1):
        return None
    strides = operand_strides(moved.info.shape, perm, y.info.shape)
    tiled = copy_tile.plan(y.info.shape, strides, contiguous_strides(tuple(y.info.shape)))
    return None if tiled is None else (moved, kept, tiled)


def _record(op, rec):
    from . import copy_tile

    tiled = _tiled(op, rec)
    if tiled is not None:  # the Transpose through shared-memory tiles, the Add as it stores
        moved, kept, plan_ = tiled
        copy_tile.record(rec, rec.tensor(moved), rec.output(op.outputs[0]), plan_, rec.tensor(kept))
        return
    attrs = op.node.attrs
    a, b = op.inputs
    y = op.outputs[0]
    dims, sa, sb = plan(y.info.shape, a.info.shape, attrs.get("perm_a"), b.info.shape, attrs.get("perm_b"))
    push = pack(numel(y.info.shape), len(dims), BINARY[attrs["op"]], 0, pad6(dims, 1), pad6(sa), pad6(sb), 0.0, 0.0)
    rec.elementwise("binary", [rec.tensor(a), rec.tensor(b), rec.output(y)], push, y.info.size)


register(TRANSPOSED_BINARY, _record, efficiency=0.8)
HALF_OPS.add(TRANSPOSED_BINARY)  # float16 tensors read directly (binary_h)

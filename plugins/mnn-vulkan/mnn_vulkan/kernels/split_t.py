"""vulkan.TransposedSplit (fuse.py proposes it): a Split of a Transpose that only it reads, as one
strided copy per output straight from the Transpose's input (copy.comp walks any source strides from
any offset), so the transposed tensor is never written (ViT's q, k and v out of one qkv product).

Inputs: the Transpose's input; attrs: the Split's axis, and "perm", the Transpose's permutation.
"""

from __future__ import annotations

from mnn_core.backend.kit.layout import contiguous_strides
from mnn_core.backend.kit.recorder import copy_words, record_copy

from ..recorder import HALF_OPS
from . import register

TRANSPOSED_SPLIT = "vulkan.TransposedSplit"


def _record(op, rec):
    x = op.inputs[0]
    perm = op.node.attrs["perm"]
    own = contiguous_strides(x.info.shape)
    strides = [own[p] for p in perm]  # of the transposed view
    axis = op.node.attrs.get("axis", 0) % len(perm)
    src, start = rec.tensor(x), 0
    for y in op.outputs:
        shape = y.info.shape
        record_copy(rec, src, rec.output(y), shape, strides, contiguous_strides(shape), start * strides[axis], 0,
                    words=copy_words(x, rec))  # fmt: skip
        start += shape[axis]


register(TRANSPOSED_SPLIT, _record, efficiency=0.8)
HALF_OPS.add(TRANSPOSED_SPLIT)  # float16 tensors moved as 16-bit elements (copy_h)

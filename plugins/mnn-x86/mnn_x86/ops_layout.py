"""Layout ops on x86: Concat and Transpose, for every dtype (they move bytes).

Reshape, Flatten, Squeeze and Unsqueeze are not claimed: the core runs them
as views on every backend. Transpose merges input axes that stay adjacent and
in order, so e.g. NCHW -> NHWC walks 3 axes, not 4.
"""

from __future__ import annotations

import numpy as np

from mnn_core.errors import BackendError
from mnn_core.graph.ir import DTYPES
from mnn_core.ops.helpers import normalize_axis

from . import _x86
from ._common import kernel, static_shape
from .layouts import NC16, channels, whole_blocks


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


@kernel("Concat", dtypes=DTYPES, efficiency=0.5)
def prepare_concat(node, ins, outs, constants, ctx, isa):
    shapes = [static_shape(i) for i in ins]
    axis = normalize_axis(node.attrs["axis"], len(shapes[0]), "Concat")
    if any(t.layout for t in (*ins, *outs)):
        # NC16 along the channels, every input but the last whole blocks (layouts.py chose it): an
        # image of each input is one run of the output's, its channels rounded up to blocks
        if not (all(t.layout == NC16 for t in (*ins, *outs)) and whole_blocks(ins, axis)):
            raise BackendError(
                f"x86: {node.name} concatenates NC16 tensors that are not whole blocks along the "
                "channels (mnn_x86/layouts.py should not have chosen NC16 for them)"
            )
        shapes = [(s[0], channels(s[1]), *s[2:]) for s in shapes]
    blocks = [_prod(s[axis:]) for s in shapes]
    return _x86.concat(isa, ctx.threads, "x86.Concat", _prod(shapes[0][:axis]), blocks)


def transpose_plan(shape: tuple, perm: list) -> tuple[list, list]:
    """(output dims, input element stride of each) with adjacent in-order axes merged."""
    in_strides = [_prod(shape[i + 1 :]) for i in range(len(shape))]
    dims, strides, last = [], [], None
    for p in perm:
        if shape[p] == 1:
            continue
        if last is not None and p == last + 1 and strides[-1] == in_strides[p] * shape[p]:
            dims[-1] *= shape[p]
            strides[-1] = in_strides[p]
        else:
            dims.append(shape[p])
            strides.append(in_strides[p])
        last = p
    return (dims or [1]), (strides or [1])


@kernel("Transpose", dtypes=DTYPES, efficiency=0.3)
def prepare_transpose(node, ins, outs, constants, ctx, isa):
    shape = static_shape(ins[0])
    perm = list(node.attrs["perm"]) or list(range(len(shape)))[::-1]
    dims, strides = transpose_plan(shape, perm)
    return _x86.transpose(isa, ctx.threads, "x86.Transpose", dims, strides)

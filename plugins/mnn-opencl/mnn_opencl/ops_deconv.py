"""ConvTranspose (1-D and 2-D, groups, strides, dilations, pads, output_padding, output_shape, auto_pad,
fused activation) as conv2d_c1 over the zero-stuffed input with the flipped weight (mnn_core.backend.kit.deconv):
the stuffed input and the flipped weight are private buffers; the zeros are written once, at resize (only
the input's cells change between runs), and so is a constant weight's flip."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.deconv import deconv_plan

from ._common import full_attrs, fused_activation, int8, kernel


def _supports(node, ins):
    if len(ins[0].shape) not in (3, 4):
        return f"1-D and 2-D ConvTranspose only, got an input of rank {len(ins[0].shape)}"
    p = deconv_plan(ins[0].shape, ins[1].shape, full_attrs(node))
    if p.stuffed_size >= 2**31:
        return f"the zero-stuffed input has {p.stuffed_size} elements (max 2^31 - 1)"
    return True


def _copy(b, src, dst, shape, ss, ds, once=False):
    n = int(np.prod(shape))
    b.launch("copy_strided", [src, dst, n, len(shape), int8(shape), int8(ss), int8(ds)], (n,), once=once, tunable=False)


@kernel("ConvTranspose", supports=_supports)
def _build_deconv(op, b):
    attrs = full_attrs(op.node)
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    p = deconv_plan(x.info.shape, w.info.shape, attrs)
    if y.info.size == 0:
        return
    stuffed, flipped = b.scratch(p.stuffed_size * 4), b.scratch(p.weight_size * 4)
    _copy(b, b.upload(np.zeros(1, np.float32)), stuffed, [p.stuffed_size], [0], [1], once=True)
    _copy(b, b.tensor(x), stuffed, *p.stuff_copy())
    shape, ss, ds, src_off = p.weight_copy()
    wt = b.tensor(w)
    _copy(b, type(wt)(wt.buffer, wt.offset + src_off), flipped, shape, ss, ds, once=w.name in op.constants)
    bias_arg = [b.tensor(bias), 1] if bias is not None else [b.tensor(y), 0]
    b.launch(
        "conv2d_c1",
        [
            stuffed,
            flipped,
            *bias_arg,
            b.tensor(y),
            p.n,
            p.c,
            p.zh,
            p.zw,
            p.o,
            p.oh,
            p.ow,
            p.cg,
            p.mg,
            p.kh,
            p.kw,
            1,
            1,
            p.pt,
            p.pl,
            p.dh,
            p.dw,
            *fused_activation(attrs),
        ],
        (-(-p.ow // 4), p.oh, p.n * p.o),
    )

"""ConvTranspose (1-D and 2-D, groups, strides, dilations, pads, output_padding, output_shape, auto_pad, fused
activation) as a convolution on the zero-stuffed input with the flipped weight (mnn_core.backend.kit.deconv):
two copies into the segment's scratch (zeros, then the input's cells), one copy flipping the weight
there, then conv2d.comp with stride 1. Split-K is off: conv2d's partial sums would share that scratch."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.deconv import deconv_attrs, deconv_operands, deconv_plan, deconv_supports
from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.params import ConvPlan, k_table
from mnn_core.backend.kit.recorder import ALIGN, SCRATCH, Binding, record_copy

from . import register
from .loops import within_budget
from .matmul import gemm_tiles


def _supports(node, ins):
    rank = deconv_supports(node, ins)
    if rank is not True:
        return rank
    p = deconv_plan(ins[0].shape, ins[1].shape, deconv_attrs(node))
    if p.g > 65535:
        return f"{p.g} groups exceed the work-group grid"
    if p.stuffed_size >= 2**31:
        return f"the zero-stuffed input has {p.stuffed_size} elements (max 2^31 - 1)"
    # conv2d.comp in one slice: at most 24 loop passes per 16 of K (K = cg x KH x KW) on lavapipe
    k = p.cg * p.kh * p.kw
    return within_budget(cdiv(k, 16) * 24 + 16, f"a ConvTranspose over K={k}")


def _record(op, rec):
    from mnn_core.backend.kit.activation import activation_code

    x, w, bias, y, attrs, p = deconv_operands(op)
    stuffed_bytes = p.stuffed_size * 4
    w_off = cdiv(stuffed_bytes, ALIGN) * ALIGN
    rec.scratch(w_off + p.weight_size * 4, written=True)
    stuffed = Binding(SCRATCH, 0, stuffed_bytes, written=True)
    flipped = Binding(SCRATCH, w_off, p.weight_size * 4, written=True)
    zero = rec.constant(np.zeros(1, np.float32))
    record_copy(rec, zero, stuffed, [p.stuffed_size], [0], [1])
    record_copy(rec, rec.tensor(x), stuffed, *p.stuff_copy())
    shape, src, dst, src_off = p.weight_copy()
    record_copy(rec, rec.tensor(w), flipped, shape, src, dst, src_off=src_off)
    act, alpha, beta = activation_code(attrs)
    has_bias = int(bias is not None)
    cp = ConvPlan(
        p.n,
        p.c,
        p.zh,
        p.zw,
        p.o,
        p.cg,
        p.kh,
        p.kw,
        p.oh,
        p.ow,
        p.g,
        (p.pt, p.pl, 0, 0),
        1,
        1,
        p.dh,
        p.dw,
        act,
        alpha,
        beta,
        has_bias,
        y.info.size,
    )
    og, k, cols = cp.gemm
    out = rec.output(y)
    reads = [Binding(SCRATCH, 0, stuffed_bytes), Binding(SCRATCH, w_off, p.weight_size * 4)]
    bindings = reads + [rec.tensor(bias) if bias is not None else reads[1], out]
    local, spec, (bm, bn) = gemm_tiles(rec.device, og, cols, p.g, rec.options, k=k)
    table = rec.constant(k_table(p.cg, p.kh, p.kw, p.dh, p.dw, p.zh, p.zw))
    push = cp.conv2d_params(1, cdiv(k, 16) * 16)
    rec.dispatch("conv2d", bindings + [out, table], push, (cdiv(cols, bn), cdiv(og, bm), p.g), local, spec)


register("ConvTranspose", _record, _supports, efficiency=0.2)

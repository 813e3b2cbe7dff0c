"""ConvTranspose, 1-D and 2-D (deconv2d.comp): groups, strides, dilations, pads,
output_padding, output_shape, auto_pad, bias and the fused activation; the geometry
is the backend kit's (a 1-D one runs as 2-D over a single row)."""

from __future__ import annotations

from mnn_core.backend.kit.codes import activation_code
from mnn_core.backend.kit.deconv import deconv_operands, deconv_supports

from ..recorder import element
from . import register
from .loops import budgeted


def _record(op, rec):
    x, w, bias, y, attrs, p = deconv_operands(op)
    # the plan's pads are those of the equivalent convolution, d * (k - 1) - pad: back to the crop
    pt, pl = p.dh * (p.kh - 1) - p.pt, p.dw * (p.kw - 1) - p.pl
    params = [
        y.info.size,
        p.c,
        p.h,
        p.w,
        p.o,
        p.oh,
        p.ow,
        p.kh,
        p.kw,
        p.sh,
        p.sw,
        pt,
        pl,
        p.dh,
        p.dw,
        p.g,
        element(x),
        element(w),
        element(bias) if bias is not None else -1,
        element(y),
        activation_code(attrs),
    ]
    rec.elementwise("deconv2d", params, [x, w, bias], [y], y.info.size)


def _passes(node, ins) -> int:
    # deconv2d.comp: kernel rows x kernel columns x the group's input channels
    w = ins[1].shape
    kh, kw = (w[2], w[3]) if len(w) == 4 else (1, w[2])
    cg = w[0] // max(int(node.attrs.get("group", 1)), 1)
    return kh * (kw * (cg + 3) + 3) + 16


register("ConvTranspose", _record, budgeted(deconv_supports, _passes), efficiency=0.2)

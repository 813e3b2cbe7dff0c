"""A 2-D ConvTranspose as a plain convolution, for the GPU backends that have a convolution kernel:
the input is zero-stuffed (stride - 1 zeros between its cells), the weight becomes OIHW with its
taps flipped, and the convolution runs with stride 1, the same dilation and pads of
dilation * (kernel - 1) - pad (negative where the crop is larger: the convolution starts further in).

    full[s*i + d*a] += x[i] * W[a]   ==   out[o] = sum_a' zs[o + pad' + d*a'] ... with W'[a'] = W[k-1-a']

Every piece is a strided copy (see `stuff_copy`, `weight_copy`) and a convolution's geometry, so a
backend needs no new shader for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .layout import contiguous_strides

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo
    from ..api import SegmentOp


@dataclass(frozen=True)
class DeconvPlan:
    n: int
    c: int
    h: int
    w: int
    g: int
    cg: int  # input channels per group
    mg: int  # output channels per group
    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    dw: int
    pt: int  # the equivalent convolution's top/left pads (may be negative)
    pl: int
    oh: int
    ow: int

    @property
    def zh(self) -> int:
        """Rows of the zero-stuffed input."""
        return (self.h - 1) * self.sh + 1

    @property
    def zw(self) -> int:
        return (self.w - 1) * self.sw + 1

    @property
    def o(self) -> int:
        return self.g * self.mg

    @property
    def stuffed_size(self) -> int:
        return self.n * self.c * self.zh * self.zw

    @property
    def weight_size(self) -> int:
        return self.o * self.cg * self.kh * self.kw

    def stuff_copy(self) -> tuple[list, list, list]:
        """(shape, src strides, dst strides) copying x into every sh-th row, sw-th column of the stuffed input."""
        src = contiguous_strides((self.n, self.c, self.h, self.w))
        n_st, c_st, _, _ = contiguous_strides((self.n, self.c, self.zh, self.zw))
        return [self.n, self.c, self.h, self.w], src, [n_st, c_st, self.sh * self.zw, self.sw]

    def weight_copy(self) -> tuple[list, list, list, int]:
        """(shape, src strides, dst strides, src offset) of W (C, M/g, KH, KW) -> W' (M, C/g, KH, KW) flipped:
        W'[gi*mg + m, ci, a, b] = W[gi*cg + ci, m, KH-1-a, KW-1-b]."""
        khw = self.kh * self.kw
        shape = [self.g, self.mg, self.cg, self.kh, self.kw]
        src = [self.cg * self.mg * khw, khw, self.mg * khw, -self.kw, -1]
        dst = contiguous_strides(shape)
        return shape, src, dst, khw - 1


def _as_2d(attrs: dict) -> dict:
    """A 1-D ConvTranspose's attributes for the same op over a (1, L) image."""
    out = dict(attrs)
    for key, one in (("strides", 1), ("dilations", 1), ("output_padding", 0), ("output_shape", 1), ("kernel_shape", 1)):
        if attrs.get(key):
            out[key] = [one, *attrs[key]]
    if attrs.get("pads"):
        out["pads"] = [0, attrs["pads"][0], 0, attrs["pads"][1]]
    return out


def deconv_attrs(node: Node) -> dict:
    """A ConvTranspose node's attributes, checked and with the schema's defaults."""
    from ...ops import get_schema  # the op registry imports the backend contract

    return get_schema("ConvTranspose").check_attrs(node.attrs, node.name)


def deconv_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    """The ranks a GPU ConvTranspose takes: 1-D and 2-D (a 1-D one runs over a single row)."""
    if len(ins[0].shape) not in (3, 4):
        return f"1-D and 2-D ConvTranspose only, got an input of rank {len(ins[0].shape)}"
    return True


def deconv_operands(op: SegmentOp) -> tuple:
    """A recorded ConvTranspose's (x, w, bias or None, y, attributes, plan)."""
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    attrs = deconv_attrs(op.node)
    return x, w, bias, op.outputs[0], attrs, deconv_plan(x.info.shape, w.info.shape, attrs)


def deconv_plan(x_shape: Sequence[int], w_shape: Sequence[int], attrs: dict) -> DeconvPlan:
    """The plan of a 2-D ConvTranspose (NCHW input, (C, M/group, KH, KW) weight); `attrs` complete
    (the schema's defaults filled in)."""
    from .geometry import conv_transpose_geometry

    if len(x_shape) == 3 and len(w_shape) == 3:  # 1-D: a 2-D one over a single row
        x_shape, w_shape, attrs = (*x_shape[:2], 1, x_shape[2]), (*w_shape[:2], 1, w_shape[2]), _as_2d(attrs)
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise ValueError(f"1-D or 2-D ConvTranspose only, got input {tuple(x_shape)}")
    geo = conv_transpose_geometry(tuple(x_shape), tuple(w_shape), attrs)
    n, c, h, w = (int(v) for v in x_shape)
    _, mg, kh, kw = (int(v) for v in w_shape)
    (sh, sw), (dh, dw) = geo["strides"], geo["dilations"]
    pads = geo["pads"]
    _, _, oh, ow = geo["out"]
    g = geo["group"]
    return DeconvPlan(
        n,
        c,
        h,
        w,
        g,
        c // g,
        mg,
        kh,
        kw,
        sh,
        sw,
        dh,
        dw,
        dh * (kh - 1) - pads[0],
        dw * (kw - 1) - pads[1],
        int(oh),
        int(ow),
    )

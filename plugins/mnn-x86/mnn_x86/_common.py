"""What the op modules share: the kernel table they register into (mnn_core.backend's KernelTable),
the fused-activation codes (abi.h's enum mnn_activation, which the C kernels switch on), and
the op names of this backend's fusions."""

from __future__ import annotations

from typing import Callable

from mnn_core.backend import Kernel, KernelSpec, KernelTable
from mnn_core.backend.kit.activation import ACT_CODES
from mnn_core.backend.kit.activation import activation_code as fused_activation
from mnn_core.backend.kit.layout import static_shape

__all__ = [
    "ACT_CODES",
    "CONV_ADD",
    "CONV_DW",
    "CONV_GAP",
    "KERNELS",
    "Kernel",
    "KernelSpec",
    "PrepareFn",
    "conv_params",
    "fused_activation",
    "kernel",
    "register",
    "static_shape",
]

#: the op of a Conv and the Add of its output and a residual, maybe with an activation after (fuse.py);
#: here, not in ops_conv.py, because layouts.py (which ops_conv.py imports) lays its sides out too
CONV_ADD = "x86.ConvAdd"
#: the op of a plain 1x1 Conv and the global average pooling after it (fuse.py), whose input may be NC16
CONV_GAP = "x86.ConvGlobalAvgPool"
#: the op of a plain 1x1 Conv and the depthwise Conv that alone reads its output (fuse.py), whose input
#: and output may be NC16
CONV_DW = "x86.ConvDepthwise"

#: a kernel's impl: prepare(node, ins, outs, constants, ctx, isa) -> an _x86.Execution
PrepareFn = Callable[..., object]

#: op name -> Kernel; filled by the op modules when they are imported
KERNELS = KernelTable()
#: register(spec, prepare), and the decorator @kernel(op, **KernelSpec fields)
register = KERNELS.add
kernel = KERNELS.kernel


def conv_params(x_shape, w_shape, geo: dict) -> dict:
    """The geometry fields _x86.conv and _x86.qconv share: batch, channels, planes, kernel, strides,
    dilations and the top/left pads of a convolution (mnn_core.backend.kit.geometry.conv_geometry's `geo`).
    C is the channels one group reads (the weight's second dimension)."""
    n, _, h, w = x_shape
    o, cg, kh, kw = w_shape
    return dict(
        N=n,
        O=o,
        group=geo["group"],
        C=cg,
        H=h,
        W=w,
        OH=geo["out"][2],
        OW=geo["out"][3],
        kh=kh,
        kw=kw,
        sh=geo["strides"][0],
        sw=geo["strides"][1],
        dh=geo["dilations"][0],
        dw=geo["dilations"][1],
        pt=geo["pads"][0],
        pl=geo["pads"][1],
    )


def pool_params(x_shape, geo: dict) -> dict:
    """The window fields of a 2-D pooling the x86 kernels take (max pooling, its gradient, the int8 and
    the fused forms): planes, kernel, strides, dilations and the top/left pads of `geo`
    (mnn_core.backend.kit.geometry.pool_geometry's, or the gradient op's)."""
    _, _, h, w = x_shape
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    return dict(
        H=h,
        W=w,
        OH=geo["out"][2],
        OW=geo["out"][3],
        kh=kh,
        kw=kw,
        sh=sh,
        sw=sw,
        dh=dh,
        dw=dw,
        pt=geo["pads"][0],
        pl=geo["pads"][1],
    )

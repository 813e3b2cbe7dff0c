"""What the op modules share: the kernel table they register into, and codes
that mirror csrc/x86.h."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mnn_core.backend import KernelSpec

#: the fused-activation vocabulary, as enum x86_act in csrc/x86.h
ACT_CODES = {"none": 0, "relu": 1, "clip": 2, "leaky_relu": 3, "sigmoid": 4, "silu": 5, "gelu": 6, "tanh": 7,
             "hard_sigmoid": 8, "hard_swish": 9}

#: the op of a Conv and the Add of its output and a residual, maybe with an activation after (fuse.py);
#: here, not in ops_conv.py, because layouts.py (which ops_conv.py imports) lays its sides out too
CONV_ADD = "x86.ConvAdd"
#: the op of a plain 1x1 Conv and the global average pooling after it (fuse.py), whose input may be NC16
CONV_GAP = "x86.ConvGlobalAvgPool"
#: the op of a plain 1x1 Conv and the depthwise Conv that alone reads its output (fuse.py), whose input
#: and output may be NC16
CONV_DW = "x86.ConvDepthwise"

#: prepare(node, ins, outs, constants, ctx, isa) -> an _x86.Execution
PrepareFn = Callable[..., object]


@dataclass(frozen=True)
class Kernel:
    spec: KernelSpec
    prepare: PrepareFn


#: op name -> Kernel; filled by the op modules when they are imported
KERNELS: dict[str, Kernel] = {}


def register(spec: KernelSpec, prepare: PrepareFn) -> None:
    KERNELS[spec.op] = Kernel(spec, prepare)


def kernel(op: str, **spec_fields):
    """Decorator: register the decorated prepare function as the kernel of `op`."""

    def wrap(fn: PrepareFn) -> PrepareFn:
        register(KernelSpec(op, **spec_fields), fn)
        return fn

    return wrap


def fused_activation(attrs: dict) -> tuple[int, float, float]:
    """(x86_act code, alpha, beta) of a Conv/Gemm/MatMul's fused activation."""
    kind = attrs.get("activation", "none")
    return ACT_CODES[kind], float(attrs.get("act_alpha", 0.0)), float(attrs.get("act_beta", 0.0))


def static_shape(info) -> tuple[int, ...]:
    return tuple(int(d) for d in info.shape)


def conv_params(x_shape, w_shape, geo: dict) -> dict:
    """The geometry fields _x86.conv and _x86.qconv share: batch, channels, planes, kernel, strides,
    dilations and the top/left pads of a convolution (mnn_core.ops.conv.conv_geometry's `geo`).
    C is the channels one group reads (the weight's second dimension)."""
    n, _, h, w = x_shape
    o, cg, kh, kw = w_shape
    return dict(N=n, O=o, group=geo["group"], C=cg, H=h, W=w, OH=geo["out"][2], OW=geo["out"][3], kh=kh, kw=kw,
                sh=geo["strides"][0], sw=geo["strides"][1], dh=geo["dilations"][0], dw=geo["dilations"][1],
                pt=geo["pads"][0], pl=geo["pads"][1])

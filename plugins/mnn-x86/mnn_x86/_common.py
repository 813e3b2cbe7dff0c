"""What the op modules share: the kernel table they register into (mnn_core.backend's KernelTable),
the fused-activation codes (abi.h's enum mnn_activation, which the C kernels switch on), the
window fields of a convolution and a pooling (the kit's, which mnn-arm reads too), and the op
names of this backend's fusions."""

from __future__ import annotations

from typing import Callable

from mnn_core.backend import Kernel, KernelSpec, KernelTable
from mnn_core.backend.kit.activation import ACT_CODES
from mnn_core.backend.kit.activation import activation_code as fused_activation
from mnn_core.backend.kit.layout import static_shape
from mnn_core.backend.kit.window import conv_params, pool_params

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
    "pool_params",
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

"""MatMulInteger and ConvInteger on x86 (_integer.pyx, csrc/integer/), with ONNX semantics
(mnn_core/ops/quant.py): uint8 or int8 operands, zero points per tensor or per row of A / column of B /
output channel of W, constant or computed, int32 output equal to the reference's.

Both run the u8 x s8 register tiles of csrc/integer/qgemm.h (vpdpbusd on AVX-512 VNNI), the zero points
taken out afterwards by row and column sums. Constant B and W are packed once at prepare (by the C the
run uses when they are computed); A and the convolution's input are packed at each run.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.geometry import conv_geometry

from . import _integer
from ._common import conv_params, kernel, static_shape

INT8 = ("uint8", "int8")


def _present(node) -> tuple[list, dict]:
    """The node's input names (padded with "" to 4) and each present input's position among them."""
    names = list(node.inputs) + [""] * (4 - len(node.inputs))
    return names, {i: k for k, i in enumerate(i for i, n in enumerate(names) if n)}


def _zero_point(names, at, constants, i: int, n: int) -> tuple[np.ndarray, int]:
    """(the zero point broadcast to n int32 values, its position among the inputs if given at run, else -1)."""
    if not names[i]:
        return np.zeros(n, np.int32), -1
    if names[i] in constants:
        return np.broadcast_to(np.asarray(constants[names[i]], np.int32).reshape(-1), (n,)).copy(), -1
    return np.zeros(n, np.int32), at[i]


def _zp_size(ins, i: int) -> int:
    return int(np.prod(static_shape(ins[i]), dtype=np.int64)) if len(ins) > i and ins[i] is not None else 1


# -- MatMulInteger -----------------------------------------------------------------------------------


def _mmi_supports(node, ins):
    if any(i is not None and i.dtype not in INT8 for i in ins):
        return "uint8 or int8 operands and zero points"
    a, b = static_shape(ins[0]), static_shape(ins[1])
    m, n = (a[-2] if len(a) > 1 else 1), (b[-1] if len(b) > 1 else 1)
    if _zp_size(ins, 2) not in (1, m):
        return "a_zero_point: one, or one per row of A"
    if _zp_size(ins, 3) not in (1, n):
        return "b_zero_point: one, or one per column of B"
    return True


def _matrix_index(batch_shape, out_batch) -> np.ndarray:
    """For each output matrix, the index of the operand's matrix it reads (broadcast)."""
    count = int(np.prod(batch_shape, dtype=np.int64))
    idx = np.arange(count, dtype=np.int64).reshape(batch_shape)
    return np.broadcast_to(
        idx.reshape((1,) * (len(out_batch) - len(batch_shape)) + tuple(batch_shape)), out_batch
    ).reshape(-1)


@kernel("MatMulInteger", dtypes=INT8 + ("int32",), supports=_mmi_supports, efficiency=0.3)
def prepare_matmul_integer(node, ins, outs, constants, ctx, isa):
    names, at = _present(node)
    a, b = list(static_shape(ins[0])), list(static_shape(ins[1]))
    a = [1] + a if len(a) == 1 else a
    b = b + [1] if len(b) == 1 else b
    m, k, n = a[-2], a[-1], b[-1]
    out_batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    za, in_za = _zero_point(names, at, constants, 2, m)
    zb, in_zb = _zero_point(names, at, constants, 3, n)
    b_count = int(np.prod(b[:-2], dtype=np.int64))
    bmat, packed = None, [i for i in (2, 3) if names[i] in constants]
    if names[1] in constants:
        bmat = np.asarray(constants[names[1]]).reshape(b_count, k, n)
        packed.append(1)
    p = dict(
        M=m,
        N=n,
        K=k,
        a_count=int(np.prod(a[:-2], dtype=np.int64)),
        b_count=b_count,
        in_za=in_za,
        in_zb=in_zb,
        a_signed=int(ins[0].dtype == "int8"),
        b_signed=int(ins[1].dtype == "int8"),
        packed=packed,
    )
    return _integer.matmul_integer(
        isa,
        ctx.threads,
        "x86.MatMulInteger",
        p,
        _matrix_index(a[:-2], out_batch),
        _matrix_index(b[:-2], out_batch),
        za,
        zb,
        bmat,
    )


# -- ConvInteger -------------------------------------------------------------------------------------


def _convi_supports(node, ins):
    if any(i is not None and i.dtype not in INT8 for i in ins):
        return "uint8 or int8 operands and zero points"
    if len(static_shape(ins[0])) != 4:
        return "only 2-D convolution"
    if _zp_size(ins, 2) != 1:
        return "x_zero_point must be one value"
    if _zp_size(ins, 3) not in (1, static_shape(ins[1])[0]):
        return "w_zero_point: one, or one per output channel"
    return True


@kernel("ConvInteger", dtypes=INT8 + ("int32",), supports=_convi_supports, efficiency=0.3)
def prepare_conv_integer(node, ins, outs, constants, ctx, isa):
    names, at = _present(node)
    x_shape, w_shape = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x_shape, w_shape, node.attrs)
    o = w_shape[0]
    zx, in_zx = _zero_point(names, at, constants, 2, 1)
    zw, in_zw = _zero_point(names, at, constants, 3, o)
    weight, packed = None, [i for i in (2, 3) if names[i] in constants]
    if names[1] in constants:
        weight = np.asarray(constants[names[1]])
        packed.append(1)
    p = dict(
        conv_params(x_shape, w_shape, geo),
        in_zx=in_zx,
        in_zw=in_zw,
        x_signed=int(ins[0].dtype == "int8"),
        w_signed=int(ins[1].dtype == "int8"),
        packed=packed,
    )
    return _integer.conv_integer(isa, ctx.threads, "x86.ConvInteger", p, int(zx[0]), zw, weight)

"""MatMul (B 2-D: A's batch folds into M; B with batch dims: one GEMM per output batch, broadcast)
and Gemm (transposes, alpha, beta,
broadcast C) on a float path's packed GEMM; constant B is packed at prepare.
QLinearMatMul (uint8/int8, constant B with per-tensor or per-column parameters) and MatMulInteger
on the int8 GEMM (sdot where the CPU has it), bit-exact with the reference."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.params import gemm_fields, matmul_fields
from mnn_core.ops.quant import requant_multiplier

from . import _arm, half, paths
from ._common import fused_activation, kernel, prod, static_shape


def _matmul_supports(node, ins):
    if len(ins[0].shape) < 1 or len(ins[1].shape) < 1:
        return "scalars are not matrices"
    return True


def _batched(node, ins, outs, ctx):
    """B with batch dims (or a 1-D B): per output batch, the element offsets of its A and B matrices."""
    a, b = list(static_shape(ins[0])), list(static_shape(ins[1]))
    a = [1] + a if len(a) == 1 else a
    b = b + [1] if len(b) == 1 else b
    m, k, n = a[-2], a[-1], b[-1]
    batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    a_idx = np.broadcast_to(np.arange(prod(a[:-2])).reshape(a[:-2] or [1]), batch or (1,)).ravel() * (m * k)
    b_idx = np.broadcast_to(np.arange(prod(b[:-2])).reshape(b[:-2] or [1]), batch or (1,)).ravel() * (k * n)
    act, act_alpha, act_beta = fused_activation(node.attrs)
    return _arm.bmatmul(_float_path(ctx, False), m, n, k, a_idx, b_idx, act, act_alpha, act_beta)


def _float_path(ctx, runtime_bias: bool) -> str:
    """fp16h when the tensors are fp16 (a runtime bias is not: such an op is widened instead)."""
    if half.half_activations(ctx) and not runtime_bias:
        return "fp16h"
    return paths.float_path(ctx.precision, ctx.options)


#: the fp32 GEMM's register tile (csrc/fp32.c's MR x NR); a tile of fewer columns (4 or 8) runs a C k-loop
#: that costs about 1.3x the assembly's per vector, and a panel's last 4 or fewer rows a 4 x 12 tile at about
#: 0.6 of the full tile's cost (counted under qemu)
FP32_TILE = (8, 12)


def _tile_cost(rows: int, cols: int) -> float:
    """Vectors of tile work a GEMM of rows x cols runs (rows in panels of MR, cols in tiles of NR)."""
    mr, nr = FP32_TILE
    tail = -(-(cols % nr) // 4)
    last = rows % mr
    panels = rows // mr + (0.6 if 0 < last <= mr // 2 else (1 if last else 0))
    return panels * (cols // nr * (nr // 4) + 1.3 * tail)


def transposed_form(m: int, n: int, path: str) -> bool:
    """Whether a MatMul / Gemm with constant B runs as C^T = B^T A^T: when A's few rows fill the tile's 12
    columns better than its 8 rows (a sentence of 12 tokens: 12 exact columns against a panel and a 4-row
    tile, 0.94 of the work); 0.95, not 1, for the transpose back. The fp32 path only; one row is the
    matrix-vector kernel's."""
    if path != "fp32" or m < 2:
        return False
    return _tile_cost(n, m) < 0.95 * _tile_cost(m, n)


def _finish(execution, path, ins, outs, ctx):
    return half.widen(execution, ins, outs) if half.half_activations(ctx) and path != "fp16h" else execution


@kernel("MatMul", half_native=True, supports=_matmul_supports, efficiency=0.7)
def prepare_matmul(node, ins, outs, constants, ctx):
    a_shape, b_shape = static_shape(ins[0]), static_shape(ins[1])
    if len(b_shape) != 2:
        return _batched(node, ins, outs, ctx)
    k, n = b_shape
    m = prod(a_shape[:-1]) if len(a_shape) > 1 else 1
    p = matmul_fields(m, n, k, 1, node.attrs)
    path = _float_path(ctx, False)
    b = constants.get(node.inputs[1])
    return _arm.matmul(path, "arm.MatMul", p, b, None, -1, b is not None and transposed_form(m, n, path))


@kernel("Gemm", half_native=True, efficiency=0.7)
def prepare_gemm(node, ins, outs, constants, ctx):
    has_c = len(node.inputs) > 2 and bool(node.inputs[2])
    c_shape = static_shape(ins[2]) if has_c else None
    p = gemm_fields(node.attrs, static_shape(ins[0]), c_shape, static_shape(outs[0]))
    bias = constants.get(node.inputs[2]) if has_c else None
    path = _float_path(ctx, has_c and bias is None)
    b = constants.get(node.inputs[1])
    transposed = b is not None and transposed_form(p["M"], p["N"], path)
    execution = _arm.matmul(path, "arm.Gemm", p, b, bias, 2 if has_c and bias is None else -1, transposed)
    return _finish(execution, path, ins, outs, ctx)


def _qmatmul_supports(node, ins):
    if len(ins[3].shape) != 2 or len(ins[0].shape) < 2:
        return "only A with 2 or more dims and a 2-D B"
    if ins[2].dtype != ins[0].dtype or ins[5].dtype != ins[3].dtype:
        return "zero points must have the dtype of their data"
    n = int(ins[3].shape[1])
    for i, what in ((1, "a_scale"), (2, "a_zero_point"), (6, "y_scale"), (7, "y_zero_point")):
        if int(np.prod(ins[i].shape)) != 1:
            return f"{what} must be one value"
    for i, what in ((4, "b_scale"), (5, "b_zero_point")):
        if int(np.prod(ins[i].shape)) not in (1, n):
            return f"{what} must be one value or one per column of B"
    return True


def _constant(constants, name, what):
    value = constants.get(name)
    if value is None:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError(f"arm QLinearMatMul needs a constant {what} (packed once, at prepare)")
    return np.asarray(value)


@kernel(
    "QLinearMatMul", half_native=True, dtypes=("uint8", "int8", "float32"), supports=_qmatmul_supports, efficiency=0.8
)
def prepare_qlinear_matmul(node, ins, outs, constants, ctx):
    names = node.inputs
    sa, za = _constant(constants, names[1], "a_scale"), _constant(constants, names[2], "a_zero_point")
    b = _constant(constants, names[3], "B")
    sb, zb = _constant(constants, names[4], "b_scale"), _constant(constants, names[5], "b_zero_point")
    sy, zy = _constant(constants, names[6], "y_scale"), _constant(constants, names[7], "y_zero_point")
    a_shape = static_shape(ins[0])
    k, n = b.shape
    mult = np.broadcast_to(requant_multiplier(sa.reshape(()), sb.ravel(), sy.reshape(())), (n,)).astype(np.float64)
    return _arm.qmatmul(
        paths.int8_path(),
        a_shape[-2],
        k,
        n,
        int(ins[0].dtype == "uint8"),
        int(za.reshape(())),
        b,
        int(b.dtype == np.uint8),
        np.broadcast_to(zb.astype(np.int64).ravel(), (n,)),
        mult,
        int(zy.reshape(())),
        1 if outs[0].dtype == "uint8" else 2,
    )


def _mmi_supports(node, ins):
    if len(ins[1].shape) != 2 or len(ins[0].shape) < 2:
        return "only A with 2 or more dims and a 2-D B"
    n = int(ins[1].shape[1])
    if len(ins) > 2 and ins[2] is not None and int(np.prod(ins[2].shape)) != 1:
        return "a_zero_point must be one value (not one per row)"
    if len(ins) > 3 and ins[3] is not None and int(np.prod(ins[3].shape)) not in (1, n):
        return "b_zero_point must be one value or one per column of B"
    return True


@kernel("MatMulInteger", half_native=True, dtypes=("uint8", "int8"), supports=_mmi_supports, efficiency=0.8)
def prepare_matmul_integer(node, ins, outs, constants, ctx):
    """(A - a_zero_point) @ (B - b_zero_point) in int32 on the int8 GEMM (sdot where the CPU has it); B and
    the zero points packed at prepare when constant, read at run otherwise (dynamically quantized models)."""
    names = list(node.inputs) + [""] * (4 - len(node.inputs))
    a_shape = static_shape(ins[0])
    k, n = static_shape(ins[1])
    b, za, zb = (constants.get(name) if name else None for name in names[1:4])
    return _arm.qmatmul(
        paths.int8_path(),
        a_shape[-2],
        k,
        n,
        int(ins[0].dtype == "uint8"),
        int(np.asarray(za).reshape(())) if za is not None else 0,
        b if b is not None else np.zeros((k, n), ins[1].dtype),
        int(ins[1].dtype == "uint8"),
        np.broadcast_to(np.asarray(zb, np.int64).ravel(), (n,)) if zb is not None else np.zeros(n, np.int64),
        np.ones(n),
        0,
        0,
        "arm.MatMulInteger",
        1 if b is None else -1,
        2 if za is None and names[2] else -1,
        3 if zb is None and names[3] else -1,
    )

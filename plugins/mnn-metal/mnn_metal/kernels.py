"""Op -> kernel mapping: each op becomes dispatches of the generated kernels.

The same recording as mnn-vulkan's kernels (the kernels *are* its shaders, so
the parameter bytes, bindings and grids must be exactly what those shaders
read), for the op families a CNN needs: broadcasting binary arithmetic with a
fused activation, unary math and activations, Conv (depthwise, 1x1 as a GEMM,
the rest as an implicit GEMM), pooling, reductions and global pools, Gemm and
MatMul, Concat, Pad and the reshapes. Ops outside this list fall back to another
backend (the reason shows in `session.plan`). Split-K and gemv, which
mnn-vulkan tuned on NVIDIA, are left out until they can be measured on a Mac.
"""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.codes import BINARY, REDUCE, UNARY, fuse_activations
from mnn_core.backend.kit.gpu_kernels import GpuKernelTable
from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.params import gemm_args, gemm_params, matmul_args, reduce_supports
from mnn_core.backend.kit.shader_ops import (
    WORDS,
    binary_supports,
    conv_operands,
    conv_supports,
    operand_bindings,
    pool_supports,
    rank6,
    record_binary,
    record_concat,
    record_pad,
    record_pool,
    record_reduce,
    record_unary,
    record_view,
)
from mnn_core.backend.kit.tiling import blocks, busiest_tile

from .recorder import HALF_OPS, MAX_ELEMENTS, MAX_GROUPS

KERNELS = GpuKernelTable(MAX_ELEMENTS, programs="kernels")
register = KERNELS.register


def record_fused(op, act, rec):
    """The binary op with the activation that follows it, as one dispatch."""
    record_binary(op, rec, act)


# -- GEMM tiling (gemm.comp, conv2d.comp: tile.glsl's TM, TN, BK) -------------------------------

#: (threads per threadgroup, (TM, TN, BK)); a block of TY*TM x TX*TN outputs
WIDE = ((16, 16, 1), (2, 4, 16))
MID = ((16, 16, 1), (2, 2, 16))
ONE = ((16, 16, 1), (1, 1, 16))
TILES = {"wide": WIDE, "mid": MID, "one": ONE}
#: threadgroups that keep an Apple GPU busy (an M1 Max has 32 cores; a guess until measured on one)
ENOUGH = 64


def gemm_tiles(m: int, n: int, batch: int, options: dict | None = None):
    """(threads, spec constants, (BM, BN)): the largest tile that still gives every GPU
    core work. The option "metal.tiles" (wide, mid, one) forces one."""
    forced = (options or {}).get("metal.tiles")
    if forced:
        if forced not in TILES:
            raise ValueError(f"metal.tiles must be one of {', '.join(TILES)}, got {forced!r}")
        local, spec = TILES[forced]
        return local, spec, blocks(local, spec)
    return busiest_tile(m, n, batch, (WIDE, MID, ONE), ENOUGH)


def _gemm(rec, bindings, m, n, k, nb1, nb2, a_st, b_st, c_st, bias_st, alpha, beta, act, aa, ab):
    params = gemm_params(m, n, k, nb2, a_st, b_st, c_st, bias_st, alpha, beta, act, aa, ab)
    local, spec, (bm, bn) = gemm_tiles(m, n, nb1 * nb2, rec.options)
    rec.dispatch("gemm", bindings, params, (cdiv(n, bn), cdiv(m, bm), nb1 * nb2), local, spec)


def _record_gemm(op, rec):
    _gemm(rec, operand_bindings(op, rec, stand_in=0), *gemm_args(op))


def _matmul_supports(node, ins):
    a, b = ins[0].shape, ins[1].shape
    if len(a) < 2 or len(b) < 2 or len(a) != len(b) or tuple(a[:-2]) != tuple(b[:-2]):
        return "MatMul of equal-rank (>= 2) operands with equal batch dims only"
    batch = int(np.prod(a[:-2])) if len(a) > 2 else 1
    return True if batch <= MAX_GROUPS else f"{batch} matrices exceed the grid"


def _record_matmul(op, rec):
    a, b = op.inputs
    _gemm(rec, [rec.tensor(a), rec.tensor(b), rec.tensor(a), rec.output(op.outputs[0])], *matmul_args(op))


# -- Conv ------------------------------------------------------------------------------------


def _record_conv(op, rec):
    planned = conv_operands(op, rec)  # the weights reach a float16 arena through MetalArena.write
    if planned is None:  # depthwise: recorded
        return
    p, bindings = planned
    og, k, cols = p.gemm
    if p.pointwise and p.n * p.g <= MAX_GROUPS:
        _pointwise(rec, bindings, p)
        return
    local, spec, (bm, bn) = gemm_tiles(og, cols, p.g, rec.options)
    chunk = cdiv(k, 16) * 16  # one K slice (no split-K), in whole BK steps
    table = rec.constant(p.k_table())
    # binding 4 is split-K's partial sums (float32 even in conv2d_h); one K slice writes binding 3 only
    grid = (cdiv(cols, bn), cdiv(og, bm), p.g)
    rec.dispatch("conv2d", bindings + [bindings[3], table], p.conv2d_params(1, chunk), grid, local, spec)


def _pointwise(rec, bindings, p):
    """Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g] (cg x HW): one GEMM per (image, group)."""
    x, w, bias, y = bindings
    og, hw = p.o // p.g, p.h * p.w
    local, spec, (bm, bn) = gemm_tiles(og, hw, p.n * p.g, rec.options)
    rec.dispatch("gemm", [w, x, bias, y], p.pointwise_params(), (cdiv(hw, bn), cdiv(og, bm), p.n * p.g), local, spec)


# -- registration -------------------------------------------------------------------------------

for _op in BINARY:
    register(_op, record_binary, binary_supports, inplace=_op == "PRelu", efficiency=0.8)
for _op in UNARY:
    register(_op, record_unary, inplace=True, efficiency=0.8)
HALF_OPS.update(UNARY)  # unary has a float16 variant
register("Conv", _record_conv, conv_supports, efficiency=0.3)
register("Gemm", _record_gemm, efficiency=0.3)
register("MatMul", _record_matmul, _matmul_supports, efficiency=0.3)
register("MaxPool", record_pool, pool_supports)
register("AveragePool", record_pool, pool_supports)
for _op in REDUCE:
    register(_op, record_reduce, reduce_supports)
for _op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
    register(_op, record_view, dtypes=WORDS, inplace=True, efficiency=1.0)
register("Identity", record_view, dtypes=WORDS, efficiency=1.0)
register("Concat", record_concat, rank6, dtypes=WORDS, efficiency=0.8)
register("Pad", record_pad, rank6, efficiency=0.8)  # not in HALF_OPS: widened under float16


def record_segment(ops, rec) -> None:
    """Every op of a segment onto `rec`, an activation fused into the binary op before it."""
    for op, act in fuse_activations(ops):
        rec.record_op(op, act, KERNELS, record_fused)

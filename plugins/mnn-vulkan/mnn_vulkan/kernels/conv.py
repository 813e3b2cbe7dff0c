"""Conv: depthwise (conv_dw.comp), 1x1 as a batched GEMM (gemm.comp), and
everything else as an implicit GEMM (conv2d.comp); on tensor cores (use_coopmat)
gemm_coop.comp and conv_coop.comp. Bias and the fused activation are applied as
the results are written. Under float16 storage
(Recorder.half) the recorder picks the *_h variants: float16 tensors, float16
products summed in float32 every BK steps (see tile.glsl)."""

from __future__ import annotations

from mnn_core.backend.kit.layout import cdiv
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.shader_ops import conv_operands, conv_supports
from mnn_core.backend.kit.tiling import blocks

from . import register
from .loops import within_budget
from .matmul import (
    COOP_BLOCK,
    COOP_LOCAL,
    FEW_ROWS,
    SMALL,
    budget_splits,
    dispatch_gemm,
    gemm_tiles,
    split_k,
    use_coopmat,
)


def _record(op, rec):
    planned = conv_operands(op, rec)
    if planned is None:  # depthwise: recorded
        return
    record_implicit_gemm(rec, *planned, op.outputs[0].info.nbytes)


def record_implicit_gemm(rec, p, bindings: list, y_nbytes: int) -> None:
    """conv2d.comp over a plan's implicit GEMM, bindings [X, W, bias, Y]: K cut into slices (split-K)
    where a GPU has too few work groups or lavapipe's loop budget needs it; a 1x1 convolution
    that needs neither runs as a batched GEMM (gemm.comp)."""
    og, k, cols = p.gemm
    local, spec, (bm, bn) = gemm_tiles(rec.device, og, cols, p.g, rec.options, k=k)
    grid = (cdiv(cols, bn), cdiv(og, bm), p.g)
    splits = split_k(rec.device, grid[0] * grid[1] * p.g, k, rec.options) if p.g <= 4096 else 1
    splits = max(splits, budget_splits(rec.device, local, spec, (bm, bn), k))  # lavapipe's loop budget
    if use_coopmat(rec, og, cols):
        if p.pointwise and p.h * p.w >= COOP_BLOCK and p.h * p.w % 8 == 0 and p.n * p.g <= 65535:
            _pointwise(rec, bindings, p)  # whole blocks of 16-byte rows per image: gemm_coop.comp
        else:
            push = p.conv2d_params(1, k)  # conv_coop.comp: images folded into the columns, no split-K
            grid = (cdiv(cols, COOP_BLOCK), cdiv(og, COOP_BLOCK), p.g)
            rec.dispatch("conv_coop", bindings + [bindings[3], rec.constant(p.k_table())], push, grid, COOP_LOCAL)
        return
    if p.pointwise and splits == 1 and p.n * p.g <= 65535:
        _pointwise(rec, bindings, p)
        return
    chunk = cdiv(cdiv(k, splits), 16) * 16  # K per slice, in whole BK steps
    splits = cdiv(k, chunk)
    partial = rec.scratch(splits * y_nbytes, written=True) if splits > 1 else bindings[3]
    table = rec.constant(p.k_table())
    push = p.conv2d_params(splits, chunk)
    rec.dispatch("conv2d", bindings + [partial, table], push, (grid[0], grid[1], p.g * splits), local, spec)
    if splits > 1:
        push = pack(p.total, splits, p.oh * p.ow, p.o, p.has_bias, p.act, p.alpha, p.beta)
        partials = rec.scratch(splits * y_nbytes, written=False)
        rec.elementwise("splitk_reduce", [partials, bindings[2], bindings[3]], push, p.total)


def _pointwise(rec, bindings, p):
    """Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g] (cg x HW): one GEMM per (image, group)."""
    x, w, bias, y = bindings
    dispatch_gemm(rec, [w, x, bias, y], p.pointwise_params(), p.o // p.g, p.h * p.w, p.n * p.g, p.cg)


def _supports(node, ins):
    """conv_supports, then lavapipe's loop budget: a depthwise window (conv_dw.comp walks it in one
    invocation) of bounded size, and K cut into slices (split-K) that the work-group grid holds."""
    found = conv_supports(node, ins)
    if found is not True:
        return found
    from ..device import choose

    w = ins[1].shape
    kh, kw = (w[2], w[3]) if len(w) == 4 else (1, w[2])
    groups = int(node.attrs.get("group", 1) or 1)
    if groups > 1 and w[1] == 1:  # depthwise: conv_dw.comp (or conv2d.comp: counted below too)
        window = within_budget(kh * (kw + 3) + 16, f"a Conv window of {kh}x{kw}")
        if window is not True:
            return window
    k = w[1] * kh * kw
    # the most slices a CPU device's tilings need (64 invocations of 4x4 or of 4x1 outputs)
    splits = max(budget_splits(choose(), local, spec, blocks(local, spec), k) for local, spec in (SMALL, FEW_ROWS))
    if splits > 1 and groups * splits > 65535:
        return f"a Conv over K={k} needs {splits} slices of K on lavapipe (its loop budget) for {groups} groups"
    return True


register("Conv", _record, _supports, efficiency=0.3)

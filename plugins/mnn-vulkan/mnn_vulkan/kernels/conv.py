"""Conv: depthwise (conv_dw.comp), 1x1 as a batched GEMM (gemm.comp), and
everything else as an implicit GEMM (conv2d.comp); bias and the fused
activation are applied as the results are written. Under float16 storage
(Recorder.half) the recorder picks the *_h variants: float16 tensors, float16
products summed in float32 every BK steps (see tile.glsl)."""

from __future__ import annotations

from mnn_core.gpu.codes import activation_code
from mnn_core.gpu.layout import cdiv
from mnn_core.gpu.params import conv_dw_params, k_table, pack, pointwise_params

from . import register
from .matmul import gemm_tiles, split_k


def _geometry(x_shape, w_shape, attrs):
    from mnn_core.ops.conv import conv_geometry

    return conv_geometry(x_shape, w_shape, attrs)


def _supports(node, ins):
    if len(ins[0].shape) != 4:
        return f"2-D convolution only (NCHW input), got rank {len(ins[0].shape)}"
    groups = node.attrs.get("group", 1)
    if groups > 65535:
        return f"{groups} groups exceed the work-group grid"
    return True


def _record(op, rec):
    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    n, c, h, wd = x.info.shape
    o, cg, kh, kw = w.info.shape
    geo = _geometry(x.info.shape, w.info.shape, op.node.attrs)
    (pt, pl, _, _), (sh, sw), (dh, dw) = geo["pads"], geo["strides"], geo["dilations"]
    _, _, oh, ow = geo["out"]
    g = geo["group"]
    act, a, b = activation_code(op.node.attrs)
    has_bias = int(bias is not None)
    bindings = [rec.tensor(x), rec.tensor(w), rec.tensor(bias if bias is not None else w), rec.output(y)]
    if g == c and c > 1:
        push = conv_dw_params(y.info.size, c, h, wd, o, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw, has_bias, act, a, b)
        rec.elementwise("conv_dw", bindings, push, y.info.size)
    else:
        og, k, cols = o // g, cg * kh * kw, n * oh * ow
        local, spec, (bm, bn) = gemm_tiles(rec.device, og, cols, g, rec.options, k=k)
        grid = (cdiv(cols, bn), cdiv(og, bm), g)
        splits = split_k(rec.device, grid[0] * grid[1] * g, k, rec.options) if g <= 4096 else 1
        pointwise = (kh, kw, sh, sw) == (1, 1, 1, 1) and geo["pads"] == [0, 0, 0, 0]
        if pointwise and splits == 1 and n * g <= 65535:
            _pointwise(rec, bindings, n, c, h * wd, o, g, has_bias, act, a, b)
            return
        chunk = cdiv(cdiv(k, splits), 16) * 16  # K per slice, in whole BK steps
        splits = cdiv(k, chunk)
        partial = rec.scratch(splits * y.info.nbytes, written=True) if splits > 1 else bindings[3]
        push = pack(n, c, h, wd, o, oh, ow, g, kh, kw, sh, sw, pt, pl, dh, dw, act, has_bias, a, b, splits, chunk)
        table = rec.constant(k_table(cg, kh, kw, dh, dw, h, wd))
        rec.dispatch("conv2d", bindings + [partial, table], push, (grid[0], grid[1], g * splits), local, spec)
        if splits > 1:
            push = pack(y.info.size, splits, oh * ow, o, has_bias, act, a, b)
            rec.elementwise(
                "splitk_reduce",
                [rec.scratch(splits * y.info.nbytes, written=False), bindings[2], bindings[3]],
                push,
                y.info.size,
            )


def _pointwise(rec, bindings, n, c, hw, o, g, has_bias, act, a, b):
    """Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g] (cg x HW): one GEMM per (image, group)."""
    og = o // g
    x, w, bias, y = bindings
    local, spec, (bm, bn) = gemm_tiles(rec.device, og, hw, n * g, rec.options)
    push = pointwise_params(n, c, hw, o, g, has_bias, act, a, b)
    rec.dispatch("gemm", [w, x, bias, y], push, (cdiv(hw, bn), cdiv(og, bm), n * g), local, spec)


register("Conv", _record, _supports, efficiency=0.3)

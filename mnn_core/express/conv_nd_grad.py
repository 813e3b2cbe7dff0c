"""The gradient of a convolution over 1 or 3 spatial axes, built from forward ops.

ConvGradInput and ConvGradWeight (the kernels backends implement) are 2-D.
For the other ranks the two halves are forward ops that already run any rank:
the input gradient is the transposed convolution of the output gradient with
the same weight, and the weight gradient is a convolution of the input with
the output gradient, batch and channel axes swapped (stride and dilation swap
roles), one per group.
"""

from __future__ import annotations

from .var import Var, apply


def _swap01(v: Var) -> Var:
    return apply("Transpose", v, perm=[1, 0] + list(range(2, v.ndim)))


def _group(v: Var, index: int, size: int) -> Var:
    return apply("Slice", v, starts=[index * size], ends=[(index + 1) * size], axes=[1])


def conv_nd_grads(x: Var, w: Var, g: Var, geo: dict, needs) -> list:
    """[dx, dw, db] of Conv for a gradient g of its (activation-free) output; geo from conv_geometry."""
    k = x.ndim - 2
    strides, dil, pads, group = geo["strides"], geo["dilations"], geo["pads"], geo["group"]
    dx = dw = db = None
    if needs(0):
        eff = [(kk - 1) * d + 1 for kk, d in zip(geo["kernel"], dil)]
        # the cells that strides skipped at the end: ConvTranspose's output_padding brings them back
        extra = [(x.shape[2 + i] + pads[i] + pads[i + k] - eff[i]) % strides[i] for i in range(k)]
        dx = apply("ConvTranspose", g, w, strides=strides, pads=pads, dilations=dil, group=group, output_padding=extra)
    if needs(1):
        cg, og = x.shape[1] // group, w.shape[0] // group
        parts = []
        for gi in range(group):
            xg = _swap01(_group(x, gi, cg) if group > 1 else x)  # (C/g, N, *sizes)
            gg = _swap01(_group(g, gi, og) if group > 1 else g)  # (O/g, N, *out)
            full = apply("Conv", xg, gg, strides=dil, dilations=strides, pads=pads)  # (C/g, O/g, >= kernel)
            kernel = apply("Slice", full, starts=[0] * k, ends=list(geo["kernel"]), axes=list(range(2, 2 + k)))
            parts.append(_swap01(kernel))
        dw = parts[0] if group == 1 else apply("Concat", *parts, axis=0)
    if needs(2):
        db = apply("ReduceSum", g, axes=[0] + list(range(2, 2 + k)), keepdims=0)
    return [dx, dw, db]

"""Pooling: MaxPool / AveragePool over zero- or -inf-padded planes (the
average's divisor per output row and column computed here by the schema's
rules), GlobalAveragePool / GlobalMaxPool as row reductions."""

from __future__ import annotations

import numpy as np

from . import _arm
from ._common import kernel, static_shape


def _window_counts(size, out, k, stride, dil, pad_lo, pad_hi, include_pad):
    starts = np.arange(out) * stride - pad_lo
    taps = starts[:, None] + np.arange(k)[None, :] * dil
    lo, hi = (-pad_lo, size + pad_hi) if include_pad else (0, size)
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


def _pool_supports(node, ins):
    return True if len(ins[0].shape) == 4 else "only NCHW (4-D) input"


def _prepare_pool(node, ins, kind, ctx):
    from mnn_core.backend.kit.geometry import pool_geometry

    x = static_shape(ins[0])
    geo = pool_geometry(x, node.attrs, node.op)
    n, c, h, w = x
    _, _, oh, ow = geo["out"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    include = bool(node.attrs.get("count_include_pad", 0))
    rows = _window_counts(h, oh, kh, sh, dh, pt, pb, include)
    cols = _window_counts(w, ow, kw, sw, dw, pl, pr, include)
    p = dict(H=h, W=w, OH=oh, OW=ow, kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw, pt=pt, pl=pl)
    threads = max(1, int(getattr(ctx, "threads", 1) or 1))
    return _arm.pool(f"arm.{node.op}", n * c, p, kind, 1.0 / np.maximum(rows, 1), 1.0 / np.maximum(cols, 1), threads)


@kernel("MaxPool", supports=_pool_supports, efficiency=0.3)
def prepare_maxpool(node, ins, outs, constants, ctx):
    return _prepare_pool(node, ins, 0, ctx)


@kernel("AveragePool", supports=_pool_supports, efficiency=0.3)
def prepare_avgpool(node, ins, outs, constants, ctx):
    return _prepare_pool(node, ins, 1, ctx)


@kernel("GlobalAveragePool", supports=_pool_supports, efficiency=0.3)
def prepare_global_avg(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    return _arm.reduce("arm.GlobalAveragePool", n * c, h * w, 1)


@kernel("GlobalMaxPool", supports=_pool_supports, efficiency=0.3)
def prepare_global_max(node, ins, outs, constants, ctx):
    n, c, h, w = static_shape(ins[0])
    return _arm.reduce("arm.GlobalMaxPool", n * c, h * w, 0)

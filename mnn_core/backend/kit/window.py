"""The fields a CPU kernel's 2-D sliding window takes, named as the C structs of mnn-x86 and mnn-arm
name them: a convolution's (conv_params), a pooling's (pool_params), and an average pooling's
divisors per output row and column (pool_divisors). Each reads the geometry geometry.py resolved
(conv_geometry's or pool_geometry's `geo`), so the backends share one reading of it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _window(x_shape: Sequence[int], geo: dict, kernel: Sequence[int]) -> dict[str, int]:
    """Planes, kernel, strides, dilations and the top/left pads: the fields every 2-D window has."""
    (sh, sw), (dh, dw), (pt, pl) = geo["strides"], geo["dilations"], geo["pads"][:2]
    h, w, oh, ow = *x_shape[2:], *geo["out"][2:]
    return dict(H=h, W=w, OH=oh, OW=ow, kh=kernel[0], kw=kernel[1], sh=sh, sw=sw, dh=dh, dw=dw, pt=pt, pl=pl)


def conv_params(x_shape: Sequence[int], w_shape: Sequence[int], geo: dict) -> dict[str, int]:
    """Batch, channels and the window of a 2-D convolution (conv_geometry's `geo`). C is the channels
    one group reads (the weight's second dimension)."""
    return dict(N=x_shape[0], O=w_shape[0], group=geo["group"], C=w_shape[1], **_window(x_shape, geo, w_shape[2:]))


def pool_params(x_shape: Sequence[int], geo: dict) -> dict[str, int]:
    """The window of a 2-D pooling (pool_geometry's `geo`, or a gradient op's of the same fields)."""
    return _window(x_shape, geo, geo["kernel"])


def window_counts(
    size: int, out: int, k: int, stride: int, dil: int, pad_lo: int, pad_hi: int, include_pad: bool
) -> np.ndarray:
    """Per output index along one axis: how many taps of its window count in an average's divisor
    (count_include_pad counts the padding, never the ceil_mode overhang)."""
    starts = np.arange(out) * stride - pad_lo
    taps = starts[:, None] + np.arange(k)[None, :] * dil
    lo, hi = (-pad_lo, size + pad_hi) if include_pad else (0, size)
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


def pool_divisors(x_shape: Sequence[int], geo: dict, include_pad: bool) -> tuple[np.ndarray, np.ndarray]:
    """1 / the divisor of each output row's and each output column's window, as float64: an average
    divides by the two multiplied, so the C kernel knows no counting convention."""
    _, _, h, w = x_shape
    _, _, oh, ow = geo["out"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    rows = window_counts(h, oh, kh, sh, dh, pt, pb, include_pad)
    cols = window_counts(w, ow, kw, sw, dw, pl, pr, include_pad)
    return 1.0 / np.maximum(rows, 1).astype(np.float64), 1.0 / np.maximum(cols, 1).astype(np.float64)

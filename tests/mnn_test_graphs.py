"""Graphs shared by the core tests, with independent numpy oracles."""

from __future__ import annotations

import numpy as np

import mnn_core as mnn


def small_cnn(rng, batch="N"):
    """conv3x3+relu -> depthwise conv -> 1x1 conv (+bias) -> add (residual) -> gemm head."""
    b = mnn.GraphBuilder("small_cnn")
    x = b.input("x", (batch, 3, 8, 8))
    w1 = b.const(rng.standard_normal((8, 3, 3, 3)).astype("float32") * 0.3, "w1")
    b1 = b.const(rng.standard_normal(8).astype("float32"), "b1")
    y = b.Relu(b.Conv(x, w1, b1, pads=[1, 1, 1, 1]))
    wd = b.const(rng.standard_normal((8, 1, 3, 3)).astype("float32") * 0.3, "wd")
    z = b.Conv(y, wd, None, pads=[1, 1, 1, 1], group=8)
    w2 = b.const(rng.standard_normal((8, 8, 1, 1)).astype("float32") * 0.3, "w2")
    b2 = b.const(rng.standard_normal(8).astype("float32"), "b2")
    z = b.Conv(z, w2, b2)
    s = b.Add(z, y)
    if "Reshape" not in mnn.ops.all_schemas():
        b.output(s, "y")
        return b.build()
    wg = b.const(rng.standard_normal((8 * 8 * 8, 10)).astype("float32") * 0.05, "wg")
    b.output(b.MatMul(b.Reshape(s, shape=[0, -1]), wg), "y")
    return b.build()


def numpy_small_cnn(graph, x):
    """The same network written directly in numpy, as the independent oracle."""
    init = graph.initializers

    def conv(x, w, bias=None, pad=0, group=1):
        n, c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
        out = np.zeros((n, o, oh, ow))
        og = o // group
        for oc in range(o):
            g = oc // og
            for i in range(kh):
                for j in range(kw):
                    patch = xp[:, g * cg : (g + 1) * cg, i : i + oh, j : j + ow]
                    out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
            if bias is not None:
                out[:, oc] += bias[oc]
        return out

    y = np.maximum(conv(x, init["w1"], init["b1"], pad=1), 0)
    z = conv(y, init["wd"], None, pad=1, group=8)
    z = conv(z, init["w2"], init["b2"])
    s = z + y
    if "wg" not in init:
        return s
    return s.reshape(s.shape[0], -1) @ init["wg"]

"""A 1x1 convolution from an NC16 input to a dense output on a plane of 512 pixels or more: the
pointwise kernel runs it as C = W X (csrc/pointwise_dense_impl.h), X's pixels packed per item, W
repacked per call, the residual of x86.ConvAdd and the activation in the tile's registers.

Oracles: the same session unfused (Session(fuse=False)) and the reference backend, on odd channel
counts (a partial NC16 block, a last W panel of a few rows) and pixel counts (a partial last panel
and item)."""

from __future__ import annotations

import numpy as np
import pytest
from mnn_x86 import isa as x86_isa
from test_conv_add import _block, _reference, _sessions

from mnn_core.graph.ir import Graph, Node, TensorInfo
from mnn_core.session import Session

pytestmark = pytest.mark.usefixtures("avx512_tile")  # every AVX-512 GEMM tile (conftest.py)

# AVX-512 runs the kernel; AVX2 (no such path) the same layers by pixel rows. The scalar ISA keeps no
# NC16 tensors and fuses no residual, so it has no such layer.
ISAS = [
    pytest.param(level, marks=pytest.mark.skipif(level not in x86_isa.supported(), reason=f"no {level} here"))
    for level in ("avx512", "avx2")
]


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "n,c,o,h,w,act",
    [
        (1, 16, 32, 24, 24, ("Relu", {})),  # whole blocks, 576 pixels: 18 panels, 3 items
        (2, 12, 40, 23, 29, ("Sigmoid", {})),  # 667 pixels a image: a last panel of 27 columns
        (1, 20, 33, 32, 17, None),  # 33 channels: a partial block, a last W panel of 5 or 1 rows
        (1, 8, 130, 26, 21, ("Clip", {"min": -0.5, "max": 0.75})),  # 546 pixels, 130 channels
        (3, 8, 17, 37, 41, ("Relu", {})),  # 3 images of 1517 pixels, K = 17: one item an image at one thread
        (2, 16, 300, 24, 23, None),  # K = 300: items of 6 panels (552 pixels: 3 items, the last of 5 panels)
        (5, 4, 21, 19, 29, ("Relu", {})),  # 5 images of 551 pixels, 21 channels: W panels of 14 and 7 rows
    ],
)
def test_residual_added_as_the_rows_are_written(rng, isa, threads, n, c, o, h, w, act):
    """x86.ConvAdd whose residual is a graph input (so its sum is dense) and whose convolution reads
    the NC16 output of the 1x1 before it."""
    g, feeds = _block(rng, n, c, o, h, w, residual="input", act=act)
    fused, plain = _sessions(g, isa, threads, layout="on")
    assert len(fused.plan.fused) == 1
    assert fused.plan.layouts.get("a") == 1 and "s" not in fused.plan.layouts  # NC16 in, dense out
    got = fused.run(feeds)[g.outputs[0]]
    np.testing.assert_allclose(got, plain.run(feeds)[g.outputs[0]], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, _reference(g, feeds), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "n,c,o,h,w", [(1, 24, 37, 19, 31), (1, 48, 64, 32, 32), (4, 24, 37, 19, 31), (3, 200, 45, 27, 25)]
)
def test_dense_output_without_residual(rng, isa, threads, n, c, o, h, w):
    """x -> 1x1 (NC16 out) -> 1x1 with a bias and HardSwish, a graph output (dense); at batch > 1
    each image's output rows where they belong (K = 200: several items an image)."""
    g = Graph(name="pw_dense")
    g.inputs["x"] = TensorInfo((n, c, h, w), "float32")
    feeds = {"x": rng.standard_normal((n, c, h, w)).astype(np.float32)}
    for name, src, cin, cout in (("a", "x", c, c), ("b", "a", c, o)):
        g.initializers[f"{name}_w"] = (rng.standard_normal((cout, cin, 1, 1)) * 0.3).astype(np.float32)
        g.initializers[f"{name}_b"] = rng.standard_normal(cout).astype(np.float32)
        g.nodes.append(Node("Conv", [src, f"{name}_w", f"{name}_b"], [name], {"kernel_shape": [1, 1]}, name))
    g.nodes.append(Node("HardSwish", ["b"], ["y"], {}, "act"))
    g.outputs = ["y"]
    kw = {"backend": "x86", "fallback": False, "threads": threads, "options": {"x86.isa": isa, "x86.layouts": "on"}}
    sess = Session(g, **kw)
    assert sess.plan.layouts.get("a") == 1 and "y" not in sess.plan.layouts
    np.testing.assert_allclose(sess.run(feeds)["y"], _reference(g, feeds), rtol=1e-4, atol=1e-4)

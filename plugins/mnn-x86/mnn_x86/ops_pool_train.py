"""MaxPool of 2x2 windows at stride 2 on x86 (LeNet's and most CNNs' pools).

The inference pooling kernel (ops_pool.py) copies every plane into a padded
scratch plane first and then reduces windows of any shape; for the common
2x2 / stride 2 pool without padding that copy costs as much as the pooling.
This path (csrc/grad_impl.h, next to the matching MaxPoolGrad path) splits the
even and odd columns of each row pair into whole vectors and takes the
maximum of the four taps directly, NaN propagating like the reference's max.
Every other MaxPool goes to the inference kernel unchanged, and so does one with an NC16 side
(layouts.py): this path walks NCHW planes.
"""

from __future__ import annotations

from mnn_core.backend import KernelSpec

from . import _x86, ops_pool  # noqa: F401  (ops_pool registers the MaxPool this path falls back to)
from ._common import KERNELS, register, static_shape
from .layouts import NC16

_general = KERNELS["MaxPool"]


def _two_by_two(node, ins) -> dict | None:
    from mnn_core.backend.kit.geometry import pool_geometry

    if len(ins[0].shape) != 4 or len([o for o in node.outputs if o]) != 1:
        return None
    n, c, h, w = static_shape(ins[0])
    geo = pool_geometry((n, c, h, w), node.attrs, "MaxPool")
    if (
        tuple(geo["kernel"]) != (2, 2)
        or tuple(geo["strides"]) != (2, 2)
        or tuple(geo["dilations"]) != (1, 1)
        or any(geo["pads"])
        or tuple(geo["out"][2:]) != (h // 2, w // 2)
    ):
        return None
    return dict(H=h, W=w, OH=h // 2, OW=w // 2, kh=2, kw=2, sh=2, sw=2, dh=1, dw=1, pt=0, pl=0, planes=n * c)


def prepare_max_pool(node, ins, outs, constants, ctx, isa):
    p = _two_by_two(node, ins)
    if p is None or NC16 in (ins[0].layout, outs[0].layout):
        return _general.impl(node, ins, outs, constants, ctx, isa)
    return _x86.max_pool_grad(isa, ctx.threads, "x86.MaxPool.2x2", p.pop("planes"), p, True)


register(KernelSpec("MaxPool", supports=_general.spec.supports, efficiency=_general.spec.efficiency), prepare_max_pool)

"""MaxPool and AveragePool (pool2d.comp, geometry from the core's pool_geometry)."""

from __future__ import annotations

from mnn_core.backend.kit.shader_ops import pool_supports, record_pool

from . import register
from .loops import budgeted


def _window_passes(node, ins) -> int:
    # pool2d.comp walks the whole window in one invocation
    kh, kw = node.attrs.get("kernel_shape", [1, 1])[-2:]
    return kh * (kw + 3) + 16


register("MaxPool", record_pool, budgeted(pool_supports, _window_passes), efficiency=0.5)
register("AveragePool", record_pool, budgeted(pool_supports, _window_passes), efficiency=0.5)

"""MaxPool and AveragePool (pool2d.comp, geometry from the core's pool_geometry)."""

from __future__ import annotations

from mnn_core.backend.kit.shader_ops import pool_supports, record_pool

from . import register

register("MaxPool", record_pool, pool_supports, efficiency=0.5)
register("AveragePool", record_pool, pool_supports, efficiency=0.5)

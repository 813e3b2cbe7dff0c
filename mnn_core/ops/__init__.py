"""Every op mnn knows: one module per family, each registering its schemas."""

from __future__ import annotations

from .schema import REQUIRED, Attr, OpSchema, Sample, all_schemas, get_schema, register, run_reference

# importing a family module registers its ops
from . import elementwise, conv, matmul  # noqa: E402,F401  isort: skip

__all__ = ["REQUIRED", "Attr", "OpSchema", "Sample", "all_schemas", "get_schema", "register", "run_reference"]

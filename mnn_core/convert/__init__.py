"""Model conversion: ONNX import and export (onnx itself is imported lazily).

from mnn_core.convert import import_onnx, to_onnx, save_onnx
graph = import_onnx("model.onnx")
proto = to_onnx(graph)            # an onnx.ModelProto
save_onnx(graph, "model.onnx")
"""

from __future__ import annotations

from . import onnx_ml  # noqa: F401  registers the ai.onnx.ml and com.microsoft handlers
from .onnx_common import OnnxImportError, Unsupported
from .onnx_export import save_onnx, to_onnx
from .onnx_import import import_onnx

__all__ = ["OnnxImportError", "Unsupported", "import_onnx", "save_onnx", "to_onnx"]

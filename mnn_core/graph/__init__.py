"""Graph IR, the graph builder and graph passes."""

from __future__ import annotations

from .ir import DTYPES, Graph, Node, TensorInfo

__all__ = ["DTYPES", "Graph", "Node", "TensorInfo"]

"""mnn_core.load / mnn_core.save: open a model file of any registered type."""

from __future__ import annotations

import os
from pathlib import Path

from ..backend.plugins import get_plugins
from ..errors import MnnError
from ..graph.ir import Graph


def load(path: str | os.PathLike, **options) -> Graph:
    """Load a model (.mnn, .onnx, or any suffix a plugin registered) as a Graph."""
    p = Path(path)
    loaders = get_plugins().loaders
    fn = loaders.get(p.suffix.lower())
    if fn is None:
        raise MnnError(
            f"cannot open {p}: unknown model type {p.suffix or '(no suffix)'!r}; known: {', '.join(sorted(loaders))}"
        )
    if not p.exists():
        raise MnnError(f"model file {p} does not exist")
    return fn(p, **options)


def save(model: Graph, path: str | os.PathLike, weights: str = "fp32") -> None:
    """Save a Graph (or a Module, through its to_graph()) as .mnn, weights stored as
    fp32, fp16 or int8 (per-channel); a path ending in .onnx exports ONNX instead."""
    from ..format import save_mnn

    if not isinstance(model, Graph):
        to_graph = getattr(model, "to_graph", None)
        if to_graph is None:
            raise MnnError(f"save() takes a Graph (or an object with to_graph()), got {type(model).__name__}")
        model = to_graph()
    if Path(path).suffix.lower() == ".onnx":
        if weights != "fp32":
            raise MnnError(f"ONNX export stores fp32 weights; weights={weights!r} is for .mnn files")
        from ..convert import save_onnx

        save_onnx(model, path)
        return
    save_mnn(model, path, weights=weights)

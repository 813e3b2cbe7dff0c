"""A model shipped once through Ray's object store, opened as a Session by each worker.

The driver reads the file (or saves a Graph) into bytes and puts them in the object store once
(`ship`); every actor fetches them from there, so the nodes need no shared path for the model and the
file is read once, not once per worker. A model of another type (ONNX) is converted to .mnn there,
once: an actor then opens mnn's own format and never imports the importer (`import onnx` takes a
second or more, in every actor of every run). A worker writes the bytes to a private temporary file only
because the loaders open paths (the .mnn reader maps the file); the file goes as soon as the Graph is
loaded, its memory map staying valid.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from ..errors import GraphError, MnnError, MnnFormatError
from ..graph.ir import Graph


@dataclass(frozen=True)
class ModelRef:
    """The model's bytes in the object store, and the file type they are (".mnn", ".onnx", ...)."""

    ref: Any  # ray.ObjectRef of bytes
    suffix: str
    name: str  # for messages: the file or graph it came from

    def load(self) -> Graph:
        """The Graph, on any node of the cluster (fetches the bytes from the object store)."""
        return load_bytes(ray.get(self.ref), self.suffix)


def load_bytes(data: bytes, suffix: str) -> Graph:
    """The Graph in the bytes of a model file of type `suffix` (".mnn", ".onnx", ...)."""
    from ..runtime.loader import load

    folder = tempfile.mkdtemp(prefix="mnn-model-")
    try:
        path = Path(folder) / f"model{suffix}"
        path.write_bytes(data)
        return load(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def ship(model: ModelRef | Graph | str | os.PathLike, suffix: str | None = None, check: bool = True) -> ModelRef:
    """Put a model (a path, a Graph, or the bytes of a model file with `suffix`) in the object store.

    Needs a connected Ray (ray.init()). A ModelRef passes through unchanged. With `check`, the bytes
    are loaded here first, so a file that is no model fails now, with its name, not in every actor;
    a model that is not .mnn is loaded here anyway, and shipped converted (see `native`)."""
    if isinstance(model, ModelRef):
        return model
    if not ray.is_initialized():
        raise MnnError("shipping a model needs a running Ray: call ray.init() (or ray.init(address=...)) first")
    data, suffix, name = model_bytes(model, suffix)
    data, suffix = shippable(data, suffix, name, check)
    return ModelRef(ray.put(data), suffix, name)


def shippable(data: bytes, suffix: str, name: str, check: bool = True) -> tuple[bytes, str]:
    """The bytes (and their file type) actors are given: a .mnn file as it is (loaded here first with
    `check`), a model of another type converted (`native`)."""
    if suffix != ".mnn":
        return native(data, suffix, name)
    if check:
        check_model(data, suffix, name)
    return data, suffix


def check_model(data: bytes, suffix: str, name: str) -> Graph:
    """The model's Graph; an MnnError naming the model if its bytes do not load."""
    try:
        return load_bytes(data, suffix)
    except Exception as exc:  # the loaders raise several kinds; the user needs the file's name and why
        raise MnnError(f"model {name} cannot be loaded: {type(exc).__name__}: {exc}") from None


def native(data: bytes, suffix: str, name: str) -> tuple[bytes, str]:
    """A model file of another type as the bytes of a .mnn file (checked: it must load), or as it came
    where .mnn cannot hold the graph (the actors then load it with its own loader, as here)."""
    graph = check_model(data, suffix, name)
    try:
        return _graph_bytes(graph), ".mnn"
    except (MnnFormatError, GraphError):
        return data, suffix


def model_bytes(model: Graph | str | os.PathLike | bytes, suffix: str | None = None) -> tuple[bytes, str, str]:
    """A model's file bytes, its file type and a name for messages: from a path, a Graph, a Module or bytes."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        if not suffix:
            raise MnnError("model bytes need their file type: ship(data, suffix='.mnn') (or '.onnx')")
        return bytes(model), suffix, f"<{len(model)} bytes>"
    if isinstance(model, Graph) or hasattr(model, "to_graph"):
        return _graph_bytes(model), ".mnn", getattr(model, "name", "graph")
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():
            raise MnnError(f"model file {path} does not exist (or is not a file); check the path")
        return path.read_bytes(), path.suffix.lower(), str(path)
    raise MnnError(f"a model is a path, a Graph, a Module or bytes; got {type(model).__name__}")


def _graph_bytes(model: Any) -> bytes:
    from ..runtime.loader import save

    folder = tempfile.mkdtemp(prefix="mnn-ship-")
    try:
        path = Path(folder) / "model.mnn"
        save(model, path)
        return path.read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)

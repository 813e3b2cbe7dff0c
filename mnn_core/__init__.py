"""mnn: a deep-learning engine whose hardware backends are plugins.

import mnn_core as mnn
sess = mnn.Session("model.mnn", backend="auto")
out = sess.run({"input": x})
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .backend.hookspecs import hookimpl
from .errors import (
    BackendError,
    GraphError,
    InputError,
    LimitError,
    MnnError,
    MnnFormatError,
    RunCancelled,
    RunTimeout,
    UnsupportedOpError,
)
from .graph.builder import GraphBuilder
from .graph.ir import Graph, Node, TensorInfo

if TYPE_CHECKING:
    from .runtime.cancel import CancelToken
    from .runtime.loader import load, save
    from .runtime.session import Session

__version__ = "0.2.0"


def get_include() -> str:
    """The folder holding mnn_core/abi.h, for compiled backends' include_dirs (mnn_core.backend.build's)."""
    from .backend.build import get_include as lookup

    return lookup()


_LAZY = ("express", "nn", "optim", "data", "train", "convert", "quant", "torch", "ops", "graph", "llm")
#: the runtime loads on first use too, so `import mnn_core.backend` (what a plugin imports) does not
#: load the session, the compiled planner and the run loop
_RUNTIME = {
    "Session": ".runtime.session",
    "load": ".runtime.loader",
    "save": ".runtime.loader",
    "CancelToken": ".runtime.cancel",
}


def __getattr__(name: str):
    """Training and conversion load on first use, so `import mnn_core` stays fast."""
    import importlib

    if name in _RUNTIME:
        value = getattr(importlib.import_module(_RUNTIME[name], __name__), name)
        globals()[name] = value
        return value
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    if name == "compile":
        from .train import compile

        return compile
    raise AttributeError(f"module 'mnn_core' has no attribute {name!r}")


def backends(reload: bool = False):
    """Every backend found, available or not, with why not (see `mnnx backends`)."""
    from .backend.status import backend_table

    return backend_table(reload)


__all__ = [
    "BackendError",
    "CancelToken",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "InputError",
    "LimitError",
    "MnnError",
    "MnnFormatError",
    "Node",
    "RunCancelled",
    "RunTimeout",
    "Session",
    "TensorInfo",
    "UnsupportedOpError",
    "backends",
    "get_include",
    "hookimpl",
    "load",
    "save",
]

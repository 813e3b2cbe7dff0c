"""mnn as an ONNX backend (`onnx.backend.base.Backend`), so onnx's BackendTest runs on it.

    import mnn_core.convert.onnx_backend as backend
    rep = backend.prepare(model, device="CPU:reference")   # or backend="x86"
    outputs = rep.run([x])                                  # in the model's output order

Devices: "CPU" (mnn picks: backend="auto" unless given) or "CPU:<mnn backend>".
Keyword options: backend=, fallback=, threads=, precision=, optimize=, and
input_shapes= for the importer.

Ops whose attributes mnn wants static but the model computes from a graph
input's *values* (a Reshape to a shape fed as an input, Range over inputs, ...)
are specialized at run time: the model is re-imported with those inputs bound
to their values, once per distinct value (the way a new shape re-plans).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BackendError, MnnError

try:  # onnx is an optional dependency: without it this module still imports
    from onnx.backend.base import Backend as _OnnxBackend
    from onnx.backend.base import BackendRep as _OnnxBackendRep
except ImportError:  # pragma: no cover
    _OnnxBackend = object
    _OnnxBackendRep = object

SESSION_OPTIONS = ("fallback", "threads", "precision", "optimize", "options")


def _parse_device(device: str, backend: str | None) -> str:
    kind, _, name = str(device or "CPU").partition(":")
    if kind.upper() != "CPU":
        raise BackendError(f"mnn's ONNX backend runs on device 'CPU' or 'CPU:<backend>', not {device!r}")
    if name and backend and name != backend:
        raise BackendError(f"device {device!r} and backend={backend!r} disagree")
    return name or backend or "auto"


class MnnBackendRep(_OnnxBackendRep):
    """A prepared model: run(inputs) -> outputs in the model's output order."""

    def __init__(self, model, backend: str = "auto", input_shapes: dict | None = None, **session_options):
        from ..runtime.session import Session
        from .onnx_import import import_onnx

        self.model = model
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [v.name for v in model.graph.input if v.name not in initializers]
        self.output_names = [v.name for v in model.graph.output]
        # the path every user takes: inputs whose values decide shapes are bound by the Session
        self.session = Session(import_onnx(model, input_shapes=input_shapes), backend=backend, **session_options)

    def run(self, inputs: Sequence[Any] | dict[str, Any], **kwargs) -> list[np.ndarray]:
        feeds = self._feeds(inputs)
        out = self.session.run({n: feeds[n] for n in self.session.input_names})
        return [out[n] for n in self.output_names]

    def _feeds(self, inputs) -> dict[str, Any]:
        if isinstance(inputs, dict):
            return {k: _value(v) for k, v in inputs.items()}
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = list(inputs)
        if len(inputs) != len(self.input_names):
            raise MnnError(
                f"the model takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), got {len(inputs)}"
            )
        return {n: _value(v) for n, v in zip(self.input_names, inputs)}


def _value(v):
    """A fed value: a sequence stays a list of arrays, an empty optional None, the rest an array."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [np.asarray(x) for x in v]
    return np.asarray(v)


class MnnBackend(_OnnxBackend):
    """onnx.backend.base.Backend for mnn: prepare, run_model, run_node, supports_device."""

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> MnnBackendRep:
        backend = _parse_device(device, kwargs.pop("backend", None))
        input_shapes = kwargs.pop("input_shapes", None)
        options = {k: kwargs.pop(k) for k in SESSION_OPTIONS if k in kwargs}
        if isinstance(model, (bytes, str)):
            from .onnx_import import load_onnx_proto

            model = load_onnx_proto(model)[0]
        return MnnBackendRep(model, backend, input_shapes, **options)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs) -> list[np.ndarray]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs) -> list[np.ndarray]:
        """Run one NodeProto on numpy inputs (outputs_info: [(dtype, shape)] per output, optional)."""
        from onnx import helper

        from .onnx_common import numpy_to_onnx

        arrays = [np.asarray(x) for x in inputs]
        names = [n for n in node.input]
        graph_inputs = [
            helper.make_tensor_value_info(n, numpy_to_onnx(a.dtype.name), a.shape) for n, a in zip(names, arrays) if n
        ]
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        model = helper.make_model(
            helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
            opset_imports=[helper.make_opsetid("", kwargs.pop("opset", _newest_opset()))],
        )
        feeds = {n: a for n, a in zip(names, arrays) if n}
        return cls.prepare(model, device, **kwargs).run(feeds)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            name = _parse_device(device, None)
        except BackendError:
            return False
        if name == "auto":
            return True
        from ..backend.plugins import get_plugins

        backend = get_plugins().backends.get(name)
        try:
            return bool(backend is not None and backend.availability())
        except Exception:
            return False


def _newest_opset() -> int:
    import onnx.defs

    return onnx.defs.onnx_opset_version()


prepare = MnnBackend.prepare
run_model = MnnBackend.run_model
run_node = MnnBackend.run_node
supports_device = MnnBackend.supports_device
is_compatible = MnnBackend.is_compatible

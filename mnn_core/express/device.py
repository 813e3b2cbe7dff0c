"""Devices: PyTorch's `device("cpu")`, mapped onto mnn's backends.

    dev = mnn_core.device("cpu")        # the x86 backend when installed, else the reference
    model.to(dev)                       # compiled modules and steps of `model` run there
    dev.backend                         # "x86"

A device names where work runs; the data of an eager tensor always lives in
host memory (numpy), so moving a tensor between devices copies nothing. What
a device decides is the backend: `mnn_core.compile(model)` and
`train.compile_step` plan their graphs on the backend of the model's device,
and eager dispatch may follow `Var.device` (see `default_device`).
"""

from __future__ import annotations

import functools

from ..errors import MnnError

#: device types that are a CPU: their backend is the best CPU backend installed
_CPU_BACKENDS = ("x86", "arm", "reference")
#: PyTorch device types mnn has no backend for, with what to use instead
_NO_BACKEND = {
    "cuda": "mnn has no CUDA backend; use 'cpu', or a GPU through 'vulkan' or 'opencl'",
    "mps": "mnn runs Apple GPUs through 'metal' (macOS only)",
    "xpu": "mnn has no XPU backend; use 'cpu', 'vulkan' or 'opencl'",
}


class Device:
    """A device: a type ("cpu", "vulkan", ... or a backend name) and an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type: str, index: int | None = None):  # noqa: A002
        self.type, self.index = type, index

    @property
    def backend(self) -> str:
        """The backend that runs this device's work (resolved once per process)."""
        return _backend_for(self.type)

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type={self.type!r}" + ("" if self.index is None else f", index={self.index}") + ")"


def device(spec: str | Device, index: int | None = None) -> Device:
    """`device("cpu")`, `device("vulkan:0")`, `device("x86")` (a backend by name)."""
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str):
        raise MnnError(f"a device is a string such as 'cpu' or 'vulkan', got {type(spec).__name__}")
    kind, _, idx = spec.partition(":")
    if idx:
        if not idx.isdigit():
            raise MnnError(f"device {spec!r}: the part after ':' must be an index such as 0")
        index = int(idx)
    if kind in _NO_BACKEND:
        raise MnnError(f"device {spec!r}: {_NO_BACKEND[kind]}")
    if kind != "cpu" and kind not in _known_backends():
        raise MnnError(
            f"unknown device {spec!r}: use 'cpu' or a backend name "
            f"({', '.join(sorted(_known_backends()))}); `mnn backends` lists them"
        )
    return Device(kind, index)


@functools.cache
def _known_backends() -> frozenset:
    from ..backend.plugins import get_plugins

    return frozenset(get_plugins().backends)


@functools.cache
def _backend_for(kind: str) -> str:
    from ..backend.plugins import get_plugins

    backends = get_plugins().backends
    candidates = _CPU_BACKENDS if kind == "cpu" else (kind,)
    reasons = []
    for name in candidates:
        b = backends.get(name)
        if b is None:
            continue
        avail = b.availability()
        if avail:
            return name
        reasons.append(f"{name}: {avail.reason}")
    raise MnnError(
        f"device {kind!r} has no available backend ({'; '.join(reasons) or 'none installed'}); `mnn backends` says why"
    )


_DEFAULT = [Device("cpu")]


def default_device() -> Device:
    """The device of tensors and modules that were not moved anywhere: "cpu" unless changed."""
    return _DEFAULT[0]


def set_default_device(spec: str | Device) -> None:
    _DEFAULT[0] = device(spec)

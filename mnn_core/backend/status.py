"""The table behind `mnnx backends` and mnn_core.backends()."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .plugins import PLUGIN_FAILURES, PluginRecord, get_plugins


@dataclass
class BackendStatus:
    name: str
    package: str
    version: str
    available: bool
    reason: str = ""
    devices: list = field(default_factory=list)
    ops: int = 0
    dtypes: list = field(default_factory=list)
    memory_domain: str = "host"

    def to_dict(self) -> dict:
        return asdict(self)


def _status(name: str, backend: Any, record: PluginRecord) -> BackendStatus:
    status = BackendStatus(name, record.package, record.version, False)
    try:  # everything read from the backend: a plugin's object may lack any of it
        status.memory_domain = str(backend.memory_domain)
        avail = backend.availability()
        status.available, status.reason = bool(avail), str(avail.reason)
        status.devices = [str(d.name) for d in backend.devices()] if status.available else []
        kernels = backend.kernels()
        status.ops = len(kernels)
        status.dtypes = sorted({str(dt) for spec in kernels.values() for dt in spec.dtypes})
    except PLUGIN_FAILURES as exc:  # a backend that cannot describe itself is unavailable, not fatal
        status.available = False
        status.reason = f"{type(exc).__name__}: {exc}"
    return status


def backend_table(reload: bool = False) -> list[BackendStatus]:
    plugins = get_plugins(reload)
    rows = [_status(n, b, plugins.backend_plugin[n]) for n, b in plugins.backends.items()]
    for record in plugins.records:  # plugins that never got as far as registering a backend
        if record.error and not record.backends:
            rows.append(BackendStatus(record.name, record.package, record.version, False, record.error))
    return rows

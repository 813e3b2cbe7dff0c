"""Plugin discovery: pluggy over the "mnn" entry-point group.

Each entry point is imported on its own, so one plugin that fails to import
(or whose backend reports unavailable) is listed with its reason and never
breaks the others. Environment:

- MNN_DISABLE_PLUGIN_AUTOLOAD=1: load no entry points (the core's own backend stays);
- MNN_LOAD_PLUGINS=x86,vulkan: load only these entry points, by name.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from importlib import import_module

import pluggy

from . import hookspecs

DEFAULT_PLUGINS = ("mnn_core.default_plugins.reference", "mnn_core.default_plugins.loaders")

if sys.version_info >= (3, 10):
    from importlib.metadata import entry_points as _entry_points

    def _mnn_entry_points():
        return list(_entry_points(group="mnn"))
else:  # pragma: no cover
    from importlib_metadata import entry_points as _entry_points

    def _mnn_entry_points():
        return list(_entry_points(group="mnn"))


@dataclass
class PluginRecord:
    """One plugin as found: where it came from, and whether it loaded."""

    name: str
    package: str
    version: str
    module: str
    error: str = ""  # why it failed to import or register, empty when fine
    backends: list = field(default_factory=list)


class Plugins:
    """The loaded plugin set: the pluggy manager plus what each plugin gave."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager("mnn")
        self.pm.add_hookspecs(hookspecs)
        self.records: list[PluginRecord] = []
        self.backends: dict[str, object] = {}
        self.backend_plugin: dict[str, PluginRecord] = {}
        self.passes: list[tuple[str, object, str]] = []
        self.loaders: dict[str, object] = {}

    # -- loading ----------------------------------------------------------------------

    def load(self) -> Plugins:
        from mnn_core import __version__

        for modname in DEFAULT_PLUGINS:
            self._add(PluginRecord(modname.rsplit(".", 1)[-1], "mnn-core", __version__, modname))
        if os.environ.get("MNN_DISABLE_PLUGIN_AUTOLOAD"):
            return self
        wanted = {s.strip() for s in os.environ.get("MNN_LOAD_PLUGINS", "").split(",") if s.strip()}
        for ep in _mnn_entry_points():
            if wanted and ep.name not in wanted:
                continue
            dist = getattr(ep, "dist", None)
            record = PluginRecord(
                ep.name,
                dist.metadata["Name"] if dist else "?",
                dist.version if dist else "?",
                ep.value,
            )
            self._add(record)
        return self

    def _add(self, record: PluginRecord) -> None:
        self.records.append(record)
        try:
            module = import_module(record.module.split(":")[0])
            self.pm.register(module, name=record.name)
        except Exception as exc:  # a broken plugin must not break the rest
            record.error = f"import failed: {type(exc).__name__}: {exc}"
            return
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            self.pm.unregister(name=record.name)
            record.error = f"invalid plugin: {exc}"
            return
        self._collect(record)

    def _collect(self, record: PluginRecord) -> None:
        """Call one plugin's hooks and keep what it registers."""
        def add_backend(backend) -> None:
            name = getattr(backend, "name", None)
            if not name or name in self.backends:
                raise ValueError(f"backend name {name!r} is missing or already taken")
            self.backends[name] = backend
            self.backend_plugin[name] = record
            record.backends.append(name)

        def add_pass(name, fn, after="fuse_activations"):
            self.passes.append((name, fn, after))

        def add_loader(suffix, fn):
            self.loaders[suffix.lower()] = fn

        hooks = {
            "mnn_register_backends": add_backend,
            "mnn_register_passes": add_pass,
            "mnn_register_loaders": add_loader,
        }
        for hook, register in hooks.items():
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                if impl.plugin_name != record.name:
                    continue
                try:  # pluggy lets an implementation take a subset of the arguments
                    impl.function(**{arg: register for arg in impl.argnames})
                except Exception as exc:
                    record.error = f"{hook} failed: {type(exc).__name__}: {exc}"


_PLUGINS: Plugins | None = None


def get_plugins(reload: bool = False) -> Plugins:
    """The process-wide plugin set, loaded on first use."""
    global _PLUGINS
    if _PLUGINS is None or reload:
        _PLUGINS = Plugins().load()
    return _PLUGINS

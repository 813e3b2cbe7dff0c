"""Plugin discovery: pluggy over the "mnn" entry-point group.

Each entry point is imported on its own, so one plugin that fails to import
(or whose backend reports unavailable) is listed with its reason and never
breaks the others: an exception, sys.exit() or KeyboardInterrupt in a plugin's
import or hooks is that plugin's failure. A plugin whose backends are all
unavailable contributes nothing (no passes, no loaders), and no plugin replaces
the core's own loaders (.mnn, .onnx). Environment:

- MNN_DISABLE_PLUGIN_AUTOLOAD=1: load no entry points (the core's own backend stays);
- MNN_LOAD_PLUGINS=x86,vulkan: load only these entry points, by name.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable

import pluggy

from . import hookspecs

DEFAULT_PLUGINS = ("mnn_core.default_plugins.reference", "mnn_core.default_plugins.loaders")
#: what a plugin may raise that is still only that plugin's failure (sys.exit() at import is SystemExit)
PLUGIN_FAILURES = (Exception, SystemExit, KeyboardInterrupt)

if sys.version_info >= (3, 10):
    from importlib.metadata import entry_points as _entry_points

    def _mnn_entry_points() -> list:
        return list(_entry_points(group="mnn"))
else:  # pragma: no cover
    from importlib_metadata import entry_points as _entry_points

    def _mnn_entry_points() -> list:
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
        self.pass_backends: list[tuple[str, ...]] = []  # per pass: its plugin's backends (none: a pass-only plugin)
        self.loaders: dict[str, object] = {}
        self.loader_plugin: dict[str, PluginRecord] = {}  # suffix -> the plugin whose loader reads it

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
        except PLUGIN_FAILURES as exc:  # a broken plugin must not break the rest
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
        """Call one plugin's hooks and keep what it registers: its passes and loaders only where one
        of its backends is available (or it has none), and no loader for a suffix the core reads."""
        passes: list[tuple[str, object, str]] = []
        loaders: dict[str, object] = {}

        def add_backend(backend: Any) -> None:
            name = getattr(backend, "name", None)
            if not name or name in self.backends:
                raise ValueError(f"backend name {name!r} is missing or already taken")
            self.backends[name] = backend
            self.backend_plugin[name] = record
            record.backends.append(name)

        def add_pass(name: str, fn: Callable, after: str = "fuse_activations") -> None:
            if not callable(fn):
                raise TypeError(f"pass {name!r} is not callable")
            passes.append((str(name), fn, after))

        def add_loader(suffix: str, fn: Callable) -> None:
            suffix = str(suffix).lower()
            core = self.loader_plugin.get(suffix)
            if core is not None and core.package == "mnn-core" and record.package != "mnn-core":
                raise ValueError(f"{suffix} files are read by mnn-core's own loader; a plugin adds model types")
            loaders[suffix] = fn

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
                except PLUGIN_FAILURES as exc:
                    record.error = f"{hook} failed: {type(exc).__name__}: {exc}"
        if (passes or loaders) and record.backends and not any(_available(self.backends[n]) for n in record.backends):
            return  # an unavailable plugin's passes would rewrite graphs for a backend that cannot run them
        self.passes += passes
        self.pass_backends += [tuple(record.backends)] * len(passes)
        self.loaders.update(loaders)
        self.loader_plugin.update(dict.fromkeys(loaders, record))

    def passes_for(self, backends: Iterable[str]) -> list[tuple[str, object, str]]:
        """The passes a session on `backends` runs: those of plugins with one of these backends, and of
        plugins that register passes only. A backend's rewrites (x86's MatMul as a 1-D convolution)
        suit its own kernels and must not reach a session on another backend."""
        chosen = set(backends)
        return [p for p, owners in zip(self.passes, self.pass_backends) if not owners or chosen.intersection(owners)]


def _available(backend: Any) -> bool:
    try:
        return bool(backend.availability())
    except PLUGIN_FAILURES:  # a backend that cannot say is not available
        return False


_PLUGINS: Plugins | None = None


_LOADING = threading.RLock()  # (a plugin that asks for the plugins while loading gets a second set, as before)


def get_plugins(reload: bool = False) -> Plugins:
    """The process-wide plugin set, loaded on first use (once, however many threads ask)."""
    global _PLUGINS
    with _LOADING:
        if _PLUGINS is None or reload:
            _PLUGINS = Plugins().load()
        return _PLUGINS

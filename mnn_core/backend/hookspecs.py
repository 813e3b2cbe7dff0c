"""Every hook a plugin may implement. Hooks receive a `register` callable and
call it once per thing they contribute; implementations may take fewer
arguments than the spec lists, so hooks can grow without breaking plugins.
"""

from __future__ import annotations

from typing import Callable

import pluggy

hookspec = pluggy.HookspecMarker("mnn")
hookimpl = pluggy.HookimplMarker("mnn")


# -- backends -------------------------------------------------------------------


@hookspec
def mnn_register_backends(register: Callable[[object], None]) -> None:
    """Register Backend objects: register(backend). Called once at start-up."""


# -- graph passes -------------------------------------------------------------------


@hookspec
def mnn_register_passes(register: Callable[..., None]) -> None:
    """Register graph passes: register(name, fn, after="fuse_activations").

    fn(graph) -> graph runs at session creation, after the core's passes (or
    after the named one). Use it for backend-specific rewrites."""


# -- model formats --------------------------------------------------------------------


@hookspec
def mnn_register_loaders(register: Callable[..., None]) -> None:
    """Register model loaders: register(suffix, fn) with fn(path, **options) -> Graph,
    so mnn_core.load() and the CLI open that file type."""

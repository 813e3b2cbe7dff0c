"""Which backends a session runs on: the names Session(backend=) gives, or every available backend
under "auto" (backend_names); each made a scheduler candidate (candidates); and whether a model that
runs eagerly may run on them at all (check_eager).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backend import PrepareContext
from ..errors import BackendError, MnnError, UnsupportedOpError
from ..graph.ir import Graph
from ..ops import get_schema
from .scheduler import REFERENCE, Candidate, make_candidate


def backend_names(backend: str | Sequence[str], plugins) -> list[str]:
    """The backends Session(backend=) names: every available one under "auto", else the named ones,
    each installed (a BackendError says which are, and why a plugin failed to load)."""
    known = plugins.backends
    if backend == "auto":
        names = []
        for name, b in known.items():
            try:
                if b.availability():
                    names.append(name)
            except Exception:  # a backend that cannot say is not available
                continue
        return names
    names = [backend] if isinstance(backend, str) else list(backend)
    if not names:
        raise BackendError("backend list is empty; name one, or use backend='auto'")
    for name in names:
        if name not in known:
            hint = ""
            broken = [r for r in plugins.records if r.name == name and r.error]
            if broken:
                hint = f" (its plugin failed to load: {broken[0].error})"
            raise BackendError(
                f"no backend named {name!r}{hint}; installed: {', '.join(sorted(known))}. "
                f"Install it (e.g. pip install mnn-{name}) or see `mnnx backends`"
            )
    return names


def candidates(names: list[str], plugins, ctx: PrepareContext, auto: bool) -> list[Candidate]:
    """The named backends as scheduler candidates. Under "auto" a backend that cannot describe
    itself (a plugin's object lacking an attribute, a method that raises) is left out; a named one
    is a BackendError saying so."""
    out = []
    for name in names:
        try:
            out.append(make_candidate(plugins.backends[name], ctx))
        except MnnError:
            if not auto:
                raise
        except Exception as exc:
            if not auto:
                raise BackendError(
                    f"backend {name!r} cannot describe itself ({type(exc).__name__}: {exc}); "
                    "see `mnnx backends`, or update its plugin"
                ) from exc
    return out


def check_eager(graph: Graph, backends: list[str], fallback: bool) -> None:
    """An eager graph runs on the reference kernels: fine unless fallback=False names another backend."""
    if fallback or REFERENCE in backends:
        return
    ops = sorted({n.op for n in graph.nodes if get_schema(n.op).dynamic})
    raise UnsupportedOpError(
        f"op {ops[0] if ops else '?'}: this model runs eagerly on the reference backend (sequence/optional "
        f"values or outputs sized by input values: {', '.join(ops) or 'its inputs'}), not on "
        f"{', '.join(backends)}; allow fallback=True"
    )

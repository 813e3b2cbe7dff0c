"""Which backends a session runs on: the names Session(backend=) gives, or every available backend
under "auto" (backend_names); each made a scheduler candidate (candidates); and whether a model that
runs eagerly may run on them at all (check_eager).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backend import PrepareContext
from ..errors import BackendError, MnnError, UnsupportedOpError
from ..graph.ir import Graph
from ..graph.shapes import SHAPE_OPS, value_nodes
from ..ops import get_schema
from ..ops.schema import is_view
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


def check_eager(graph: Graph, backends: list[str], fallback: bool, cands: list[Candidate] | None = None) -> None:
    """An eager graph under fallback=False (unless the reference is named): with `cands` (its eager
    program plans the pieces between control ops: eager.py) every op of the graph and its bodies but
    If, Loop and Scan needs a kernel on some named backend, and no other dynamic op may run (those run
    on their reference kernels); without, the whole graph runs on the reference kernels: refused."""
    from .eager import CONTROL, all_graphs

    if fallback or REFERENCE in backends:
        return
    if cands is None:
        ops = sorted({n.op for n in graph.nodes if get_schema(n.op).dynamic})
        raise UnsupportedOpError(
            f"op {ops[0] if ops else '?'}: this model runs eagerly on the reference backend (sequence/optional "
            f"values or outputs sized by input values: {', '.join(ops) or 'its inputs'}), not on "
            f"{', '.join(backends)}; allow fallback=True"
        )
    for g in all_graphs(graph):
        folded = shape_nodes(g)
        for node in g.nodes:
            if node.op in CONTROL or node.name in folded:
                continue
            if get_schema(node.op).dynamic:
                raise UnsupportedOpError(
                    f"op {node.op} (node {node.name!r}): its outputs are sized by its input values (or are "
                    "sequences/optionals), so it runs on the reference kernels, which fallback=False forbids; "
                    "allow fallback=True"
                )
            if not is_view(node.op) and not any(node.op in c.kernels for c in cands):
                raise UnsupportedOpError(
                    f"op {node.op} (node {node.name!r}) has no kernel on {', '.join(backends)}, and fallback=False "
                    "forbids the reference kernels; allow fallback=True or choose another backend"
                )


def shape_nodes(graph: Graph) -> set[str]:
    """Names of the nodes that compute shapes (Shape, what reads only shapes and constants, and what
    leads to a value that decides a shape): resize folds them into constants, no kernel runs them.
    Where one reads data after all, the plan's placement refuses it then."""
    values = [n for node in graph.nodes for i, n in enumerate(node.inputs) if i in get_schema(node.op).value_inputs]
    found = value_nodes(graph, values)
    known = set(graph.initializers)
    for node in graph.nodes:
        ins = [n for n in node.inputs if n]
        shapes_only = ins and all(n in known for n in ins) and any(n not in graph.initializers for n in ins)
        if node.op in SHAPE_OPS or (shapes_only and not get_schema(node.op).dynamic):
            found.add(node.name)
        if node.name in found:
            known.update(node.outputs)
    return found

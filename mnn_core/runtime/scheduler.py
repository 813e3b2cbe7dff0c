"""Placement: which backend runs each op, and why.

Two modes:

- a backend list (`"x86"` or `["vulkan", "x86"]`): each op goes to the first
  backend in the list whose kernel accepts it, then to the reference backend
  (unless `fallback=False`, which makes an unsupported op an error);
- `"auto"`: every available backend bids its estimated cost for every op,
  plus the cost of copying inputs that live in another memory domain. The
  cheapest placement is found by dynamic programming along the topological
  order (exact for chains, a good heuristic for DAGs: each state keeps the
  full placement of its best path, so copy costs use real producers).

Costs come from a roofline: flops over the device's peak, bytes over its
bandwidth, plus a fixed launch cost — or from a kernel's own `cost` function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..backend import Backend, CostEstimate, DeviceInfo, KernelSpec
from ..errors import BackendError, UnsupportedOpError
from ..graph.ir import Graph, Node, TensorInfo
from ..ops import get_schema
from ..ops.schema import is_view, view_ops

REFERENCE = "reference"

#: the view ops (OpSchema.view: the output is the input's bytes under another shape), which every
#: backend "runs", as an alias of the input (no step) or, where aliasing is impossible, a copy;
#: kept under this name for plugins written before the flag (mnn_core.ops.schema.view_ops)
VIEW_OPS = view_ops()


@dataclass(frozen=True)
class Placement:
    node: str
    op: str
    backend: str
    reason: str
    est_ms: float


@dataclass
class Candidate:
    backend: Backend
    device: DeviceInfo
    kernels: dict[str, KernelSpec]
    domain: str = "host"  # where its tensors live in this session (Backend.memory_domain_for)


def roofline_ms(
    node: Node,
    ins: Sequence[TensorInfo],
    outs: Sequence[TensorInfo],
    device: DeviceInfo,
    spec: KernelSpec,
    threads: int,
) -> float:
    flops = get_schema(node.op).estimate_flops([i for i in ins if i is not None], outs, node.attrs)
    nbytes = sum(i.nbytes for i in ins if i is not None) + sum(o.nbytes for o in outs)
    scale = threads if device.kind == "cpu" else 1
    compute = flops / (device.peak_gflops * 1e6 * max(spec.efficiency, 1e-3) * scale)
    memory = nbytes / (device.bandwidth_gbs * 1e6)
    return device.launch_us / 1e3 + max(compute, memory)


def copy_ms(nbytes: int, src: DeviceInfo, dst: DeviceInfo) -> float:
    """Moving a tensor between memory domains: a transfer plus a fixed latency."""
    bw = min(src.bandwidth_gbs, dst.bandwidth_gbs, 16.0)  # host links rarely beat PCIe-class speed
    return 0.01 + nbytes / (bw * 1e6)


def estimate(cand: Candidate, node: Node, ins, outs, threads: int) -> float:
    spec = cand.kernels.get(node.op)
    if spec is None:  # a view op the core handles: free when aliased
        return 0.0
    if spec.cost is not None:
        est = spec.cost(node, ins, outs, cand.device, threads)
        return est.run_ms if isinstance(est, CostEstimate) else float(est)
    return roofline_ms(node, ins, outs, cand.device, spec, threads)


def _verdict(cand: Candidate, node: Node, ins) -> bool | str:
    spec = cand.kernels.get(node.op)
    if spec is None and is_view(node.op):
        return True  # the core runs it as a view
    if spec is None:
        return f"no {node.op} kernel"
    return spec.accepts(node, ins)


def place_listed(
    graph: Graph,
    infos: dict[str, TensorInfo],
    cands: list[Candidate],
    reference: Candidate,
    fallback: bool,
    threads: int,
) -> list[Placement]:
    """Each op on the first listed backend that accepts it, else the reference."""
    plan = []
    for node in graph.nodes:
        ins = [infos[n] if n else None for n in node.inputs]
        outs = [infos[n] for n in node.outputs]
        refusals = []
        chosen = None
        for cand in cands:
            verdict = _verdict(cand, node, ins)
            if verdict is True:
                chosen = cand
                break
            refusals.append(f"{cand.backend.name}: {verdict}")
        if chosen is None:
            if not fallback:
                listed = ", ".join(c.backend.name for c in cands)
                raise UnsupportedOpError(
                    f"op {node.op} (node {node.name!r}) cannot run on {listed} with fallback=False "
                    f"({'; '.join(refusals)}); allow fallback or choose another backend"
                )
            chosen = reference
            reason = "fallback (" + "; ".join(refusals) + ")" if refusals else "requested"
        else:
            reason = "requested" if not refusals else "fallback (" + "; ".join(refusals) + ")"
        plan.append(
            Placement(node.name, node.op, chosen.backend.name, reason, estimate(chosen, node, ins, outs, threads))
        )
    return plan


def place_auto(graph: Graph, infos: dict[str, TensorInfo], cands: list[Candidate], threads: int) -> list[Placement]:
    """Cheapest placement by DP over the topological order, copies included."""
    by_name = {c.backend.name: c for c in cands}
    # state: backend of the latest node -> (total ms, {value: domain backend name}, placements)
    states: dict[str, tuple[float, dict[str, str], list[Placement]]] = {"": (0.0, {}, [])}
    for node in graph.nodes:
        ins = [infos[n] if n else None for n in node.inputs]
        outs = [infos[n] for n in node.outputs]
        new_states: dict[str, tuple[float, dict[str, str], list[Placement]]] = {}
        for cand in cands:
            if _verdict(cand, node, ins) is not True:
                continue
            run = estimate(cand, node, ins, outs, threads)
            for total, where, placed in states.values():
                copies = 0.0
                for name in filter(None, node.inputs):  # "" is an absent optional input
                    src = where.get(name)  # None: graph input or constant, in host memory
                    src_domain = by_name[src].domain if src else "host"
                    if src_domain != cand.domain:
                        src_dev = by_name[src].device if src else cand.device
                        copies += copy_ms(infos[name].nbytes, src_dev, cand.device)
                cost = total + run + copies
                best = new_states.get(cand.backend.name)
                if best is None or cost < best[0] - 1e-12:
                    reason = f"cheapest: {run:.4f} ms" + (f" + {copies:.4f} ms copies" if copies else "")
                    new_where = dict(where)
                    new_where.update({o: cand.backend.name for o in node.outputs})
                    new_states[cand.backend.name] = (
                        cost,
                        new_where,
                        placed + [Placement(node.name, node.op, cand.backend.name, reason, run)],
                    )
        if not new_states:
            raise UnsupportedOpError(f"no available backend runs op {node.op} (node {node.name!r})")
        states = new_states
    # ties go to the higher-priority backend
    best = min(states.values(), key=lambda s: (round(s[0], 9), -_priority_sum(s[2], by_name)))
    return best[2]


def _priority_sum(placed: list[Placement], by_name: dict[str, Candidate]) -> int:
    return sum(by_name[p.backend].backend.priority for p in placed)


def make_candidate(backend: Backend, ctx=None) -> Candidate:
    avail = backend.availability()
    if not avail:
        raise BackendError(f"backend {backend.name!r} is not available here: {avail.reason}")
    devices = backend.devices()
    domain_for = getattr(backend, "memory_domain_for", None)  # backends not derived from Backend lack it
    domain = domain_for(ctx) if ctx is not None and callable(domain_for) else backend.memory_domain
    return Candidate(backend, devices[0] if devices else DeviceInfo(backend.name), backend.kernels(), domain)

"""Graph passes run once at session creation, in this order:

1. fold_constants      ops whose inputs are all constants become constants
2. fold_batchnorm      BatchNormalization after Conv/Gemm folds into its weights
3. fuse_activations    an activation after Conv/Gemm/MatMul becomes its attribute
4. remove_identities   Identity nodes that are not graph outputs disappear
5. eliminate_dead      nodes and constants nothing reads are dropped

Each pass takes a Graph and returns a Graph (it may modify its argument: the
session passes a copy). Plugins add passes with the mnn_register_passes hook.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ops import get_schema
from ..ops.elementwise import ACTIVATION_OPS
from .ir import Graph, Node

FUSABLE_PRODUCERS = ("Conv", "Gemm", "MatMul", "ConvTranspose")
MAX_FOLD_BYTES = 64 << 20  # do not materialize constants larger than this


def fold_constants(graph: Graph) -> Graph:
    kept = []
    for node in graph.nodes:
        ins = [n for n in node.inputs if n]
        if ins and all(n in graph.initializers for n in ins) and not any(o in graph.outputs for o in node.outputs):
            arrays = [graph.initializers[n] if n else None for n in node.inputs]
            results = get_schema(node.op).reference(arrays, node.attrs)
            if sum(r.nbytes for r in results) <= MAX_FOLD_BYTES:
                for name, value in zip(node.outputs, results):
                    graph.initializers[name] = np.asarray(value, order="C")
                continue
        kept.append(node)
    graph.nodes = kept
    return graph


def _single_consumer(graph: Graph, value: str, consumers) -> Node | None:
    users = consumers.get(value, [])
    if len(users) != 1 or value in graph.outputs:
        return None
    return users[0]


def fold_batchnorm(graph: Graph) -> Graph:
    consumers = graph.consumers()
    producers = graph.producers()
    init = graph.initializers
    drop = set()
    for bn in graph.nodes:
        if bn.op != "BatchNormalization" or len(bn.outputs) != 1:
            continue
        src = producers.get(bn.inputs[0])
        if src is None or src.op not in ("Conv", "Gemm") or src.attrs.get("activation", "none") != "none":
            continue
        if _single_consumer(graph, src.outputs[0], consumers) is not bn:
            continue
        if not all(n in init for n in bn.inputs[1:]) or src.inputs[1] not in init:
            continue
        if len(src.inputs) > 2 and src.inputs[2] and src.inputs[2] not in init:
            continue
        if src.op == "Gemm" and (src.attrs.get("alpha", 1.0) != 1.0 or src.attrs.get("beta", 1.0) != 1.0):
            continue
        gamma, beta, mean, var = (init[n].astype(np.float64) for n in bn.inputs[1:5])
        k = gamma / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
        w = init[src.inputs[1]].astype(np.float64)
        b = init[src.inputs[2]].astype(np.float64) if len(src.inputs) > 2 and src.inputs[2] else np.zeros_like(mean)
        if src.op == "Conv":  # (any number of spatial axes)
            w = w * k.reshape((-1,) + (1,) * (w.ndim - 1))
        elif src.attrs.get("transB", 0):
            w = w * k.reshape(-1, 1)
        else:
            w = w * k.reshape(1, -1)
        if b.shape != mean.shape:
            continue
        b = (b - mean) * k + beta
        w_name, b_name = f"{src.name}.folded_weight", f"{src.name}.folded_bias"
        init[w_name] = w.astype(np.float32)
        init[b_name] = b.astype(np.float32)
        src.inputs = [src.inputs[0], w_name, b_name]
        src.outputs = list(bn.outputs)
        drop.add(id(bn))
    graph.nodes = [n for n in graph.nodes if id(n) not in drop]
    return graph


def fuse_activations(graph: Graph) -> Graph:
    consumers = graph.consumers()
    producers = graph.producers()
    drop = set()
    for act in graph.nodes:
        if act.op not in ACTIVATION_OPS:
            continue
        src = producers.get(act.inputs[0])
        if src is None or src.op not in FUSABLE_PRODUCERS or src.attrs.get("activation", "none") != "none":
            continue
        if _single_consumer(graph, src.outputs[0], consumers) is not act:
            continue
        kind, params = ACTIVATION_OPS[act.op]
        values = {k: act.attrs[v] for k, v in params.items()}
        src.attrs = {**src.attrs, "activation": kind,
                     "act_alpha": values.get("alpha", 0.0), "act_beta": values.get("beta", 0.0)}
        src.outputs = list(act.outputs)
        drop.add(id(act))
    graph.nodes = [n for n in graph.nodes if id(n) not in drop]
    return graph


def remove_identities(graph: Graph) -> Graph:
    rename: dict[str, str] = {}
    kept = []
    for node in graph.nodes:
        node.inputs = [rename.get(n, n) for n in node.inputs]
        if node.op == "Identity" and node.outputs[0] not in graph.outputs:
            rename[node.outputs[0]] = node.inputs[0]
            continue
        kept.append(node)
    graph.nodes = kept
    return graph


def eliminate_dead(graph: Graph) -> Graph:
    live = set(graph.outputs)
    kept = []
    for node in reversed(graph.nodes):
        if any(o in live for o in node.outputs):
            kept.append(node)
            live.update(n for n in node.inputs if n)
    graph.nodes = kept[::-1]
    graph.initializers = {k: v for k, v in graph.initializers.items() if k in live}
    return graph


CORE_PASSES: list[tuple[str, Callable[[Graph], Graph]]] = [
    ("fold_constants", fold_constants),
    ("fold_batchnorm", fold_batchnorm),
    ("fuse_activations", fuse_activations),
    ("remove_identities", remove_identities),
    ("eliminate_dead", eliminate_dead),
]


def optimize(graph: Graph, extra=()) -> Graph:
    """Run the core passes, then plugin passes after the pass each one names."""
    order = list(CORE_PASSES)
    for name, fn, after in extra:
        idx = next((i for i, (n, _) in enumerate(order) if n == after), len(order) - 1)
        order.insert(idx + 1, (name, fn))
    out = graph.copy()
    for _, fn in order:
        out = fn(out)
    out.validate()
    return out

"""Graph passes run once at session creation, in this order:

1. fold_constants      ops whose inputs are all constants become constants
2. slices_to_split,    one exporter's spelling made another's, which the fusions take
   mean_to_global_pool (graph/spellings.py)
3. fold_batchnorm      BatchNormalization after Conv/Gemm folds into its weights
4. fuse_activations    an activation after Conv/Gemm/MatMul becomes its attribute
5. remove_identities   Identity nodes that are not graph outputs disappear
6. eliminate_dead      nodes and constants nothing reads are dropped

Each pass takes a Graph and returns a Graph (it may modify its argument: the
session passes a copy). Plugins add passes with the mnn_register_passes hook.
"""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ..errors import GraphError, LimitError
from ..ops import get_schema
from ..ops.elementwise import ACTIVATION_OPS
from .inline import lower_data_ifs
from .ir import Graph, Node
from .spellings import mean_to_global_pool, slices_to_split

FUSABLE_PRODUCERS = ("Conv", "Gemm", "MatMul", "ConvTranspose")
MAX_FOLD_BYTES = 64 << 20  # do not materialize constants larger than this


def fold_constants(graph: Graph) -> Graph:
    kept = []
    for node in graph.nodes:
        ins = [n for n in node.inputs if n]
        if ins and all(n in graph.initializers for n in ins) and not any(o in graph.outputs for o in node.outputs):
            arrays = [graph.initializers[n] if n else None for n in node.inputs]
            try:
                results = get_schema(node.op).reference(arrays, node.attrs)
            except LimitError as exc:
                raise LimitError(f"node {node.name!r} ({node.op}), folded as its inputs are constants: {exc}") from None
            except Exception as exc:
                raise _fold_error(node, "its inputs are all constants, and computing it", exc) from exc
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
        try:
            folded = _folded_weights(src, bn, init)
        except Exception as exc:
            raise _fold_error(bn, f"folding it into {src.op} {src.name!r}", exc) from exc
        if folded is None:
            continue
        w_name, b_name = f"{src.name}.folded_weight", f"{src.name}.folded_bias"
        init[w_name], init[b_name] = folded
        src.inputs = [src.inputs[0], w_name, b_name]
        src.outputs = list(bn.outputs)
        drop.add(id(bn))
    graph.nodes = [n for n in graph.nodes if id(n) not in drop]
    return graph


def _folded_weights(src: Node, bn: Node, init: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The Conv's or Gemm's weight and bias with the BatchNormalization after it folded in (float32),
    or None where the shapes do not fold."""
    gamma, beta, mean, var = (np.asarray(init[n]).astype(np.float64) for n in bn.inputs[1:5])
    k = gamma / np.sqrt(var + bn.attrs.get("epsilon", 1e-5))
    w = np.asarray(init[src.inputs[1]]).astype(np.float64)
    b = (
        np.asarray(init[src.inputs[2]]).astype(np.float64)
        if len(src.inputs) > 2 and src.inputs[2]
        else np.zeros_like(mean)
    )
    if src.op == "Conv":  # (any number of spatial axes)
        w = w * k.reshape((-1,) + (1,) * (w.ndim - 1))
    elif src.attrs.get("transB", 0):
        w = w * k.reshape(-1, 1)
    else:
        w = w * k.reshape(1, -1)
    if b.shape != mean.shape:
        return None
    b = (b - mean) * k + beta
    return w.astype(np.float32), b.astype(np.float32)


def _fold_error(node: Node, doing: str, exc: Exception) -> GraphError:
    why = str(exc) if isinstance(exc, GraphError) else f"{type(exc).__name__}: {exc}"
    return GraphError(f"node {node.name!r} ({node.op}): {doing} failed: {why}")


def fuse_silu(graph: Graph) -> Graph:
    """x * Sigmoid(x) (how torch's exporters write SiLU/Swish) becomes one Silu, which the next pass
    can fold into the Conv before it: one pass over memory instead of three."""
    consumers = graph.consumers()
    producers = graph.producers()
    drop = set()
    for mul in graph.nodes:
        if mul.op != "Mul" or len(mul.inputs) != 2:
            continue
        for x, s in (mul.inputs, mul.inputs[::-1]):
            sig = producers.get(s)
            if (
                sig is not None
                and sig.op == "Sigmoid"
                and sig.inputs[0] == x
                and _single_consumer(graph, s, consumers) is mul
            ):
                mul.op, mul.inputs, mul.attrs = "Silu", [x], {}
                drop.add(id(sig))
                break
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
        src.attrs = {
            **src.attrs,
            "activation": kind,
            "act_alpha": values.get("alpha", 0.0),
            "act_beta": values.get("beta", 0.0),
        }
        src.outputs = list(act.outputs)
        drop.add(id(act))
    graph.nodes = [n for n in graph.nodes if id(n) not in drop]
    return graph


def clip_data_bounds(graph: Graph) -> Graph:
    """A Clip whose min or max follows the data (a log-mel spectrogram clipped at its maximum less
    80 dB) becomes Max and Min of tensors: Clip's bounds are attributes bound at resize, and a
    bound known only at run would keep the whole graph eager. Min(Max(x, lo), hi) is Clip's
    definition; a NaN bound propagates there instead of being no bound."""
    from .shapes import follows_data

    kept = []
    for node in graph.nodes:
        bounds = (list(node.inputs[1:]) + ["", ""])[:2] if node.op == "Clip" else ["", ""]
        if not any(b and follows_data(graph, b) for b in bounds):
            kept.append(node)
            continue
        value = node.inputs[0]
        for op, bound in (("Max", bounds[0]), ("Min", bounds[1])):
            if bound:
                out = node.outputs[0] if op == "Min" or not bounds[1] else f"{node.name}/{op}"
                kept.append(Node(op, [value, bound], [out], {}, f"{node.name}/{op}"))
                value = out
    graph.nodes = kept
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
    ("clip_data_bounds", clip_data_bounds),
    ("lower_data_ifs", lower_data_ifs),
    ("slices_to_split", slices_to_split),
    ("mean_to_global_pool", mean_to_global_pool),
    ("fold_batchnorm", fold_batchnorm),
    ("fuse_silu", fuse_silu),
    ("fuse_activations", fuse_activations),
    ("remove_identities", remove_identities),
    ("eliminate_dead", eliminate_dead),
]


def optimize(graph: Graph, extra=()) -> Graph:
    """Run the core passes, then plugin passes after the pass each one names. A plugin's pass runs
    on a copy; one that raises, returns no Graph or returns an invalid one is skipped with a
    RuntimeWarning naming it, and the graph goes on as it was."""
    order = [(name, fn, False) for name, fn in CORE_PASSES]
    for name, fn, after in extra:
        idx = next((i for i, (n, _, _) in enumerate(order) if n == after), len(order) - 1)
        order.insert(idx + 1, (name, fn, True))
    out = graph.copy()
    for name, fn, plugin in order:
        out = _plugin_pass(name, fn, out) if plugin else fn(out)
    out.validate()
    return out


def _plugin_pass(name: str, fn: Callable[[Graph], Graph], graph: Graph) -> Graph:
    try:
        result = fn(graph.copy())
        if not isinstance(result, Graph):
            raise TypeError(f"it returned {type(result).__name__}, not a Graph")
        result.validate()
        return result
    except Exception as exc:
        warnings.warn(
            f"graph pass {name!r} (a plugin's) skipped: {type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=3
        )
        return graph

"""An If whose condition is known at resize becomes the nodes of the branch it takes.

A model that picks a branch by an input's value (silero-vad's If on its sample rate) or by a
shape then plans like any static graph, on any backend, instead of running node by node on the
reference kernels; its plans are keyed by that value (Session.value_inputs).
"""

from __future__ import annotations

import json

import numpy as np

from .ir import Graph, Node

#: Graph.metadata key of lower_data_ifs' branches, as JSON (metadata values are strings): "<If>/then" or
#: "<If>/else" -> [the If's condition as a bool scalar, the value for which that branch's outputs are picked]
BRANCH_GUARDS = "mnn.branch_guards"


def if_condition(value) -> bool:
    return bool(np.asarray(value).reshape(-1)[0])


def inline_if(node: Node, cond: bool) -> tuple[list[Node], dict[str, np.ndarray]]:
    """(nodes, initializers) that compute `node`'s outputs as the branch `cond` picks does. The
    branch's inputs are the If's captures (its inputs after the condition); its own values are
    renamed under the If's name, and its outputs take the If's output names."""
    branch: Graph = node.attrs["then_branch" if cond else "else_branch"]
    prefix = f"{node.name}/{'then' if cond else 'else'}/"
    rename = dict(zip(branch.inputs, node.inputs[1:]))
    copies = []  # branch outputs that are its inputs or constants, or that feed two outputs
    for out, value in zip(node.outputs, branch.outputs):
        if value in rename or value in branch.initializers:
            copies.append((value, out))
        else:
            rename[value] = out

    def name(value: str) -> str:
        return rename.get(value, prefix + value) if value else ""

    nodes = [
        Node(n.op, [name(i) for i in n.inputs], [name(o) for o in n.outputs], dict(n.attrs), prefix + n.name)
        for n in branch.nodes
    ]
    nodes += [Node("Identity", [name(value)], [out], {}, f"{prefix}{out}") for value, out in copies]
    return nodes, {prefix + k: v for k, v in branch.initializers.items()}


def resolvable_ifs(graph: Graph) -> bool:
    """Whether If nodes (in branches too) are all that keeps `graph` from a plan per shape: its
    other ops and values are static. Whether each condition is known at resize is for
    shapes.value_sources to say, on both_branches(graph)."""
    from ..ops import get_schema

    def static_but_ifs(g: Graph) -> bool:
        return all(
            not get_schema(n.op).dynamic
            or (n.op == "If" and static_but_ifs(n.attrs["then_branch"]) and static_but_ifs(n.attrs["else_branch"]))
            for n in g.nodes
        )

    if not any(n.op == "If" for n in graph.nodes) or not static_but_ifs(graph):
        return False
    return not Graph(inputs=graph.inputs, initializers=graph.initializers).is_dynamic()


#: ops that fail on some data (an index out of range): an untaken branch must not run them
_FAILS_ON_DATA = frozenset({"Gather", "GatherElements", "GatherND", "Scatter", "ScatterElements", "ScatterND"})


def lower_data_ifs(graph: Graph) -> Graph:
    """An If whose condition follows the data (a keyword spotter's verifier run only on a likely
    hit) becomes both branches and a Where between their outputs, where that is safe: both
    branches are static, run no op that fails on some data, and give outputs of one shape and
    dtype. The graph then plans. Its metadata names each branch's condition (BRANCH_GUARDS), so a
    run skips the steps of the branch the condition does not pick (the Where ignores their outputs)."""
    from ..ops import get_schema
    from .shapes import follows_data

    ifs = [n for n in graph.nodes if n.op == "If"]
    if not ifs:
        return graph
    infos = None
    nodes: list[Node] = []
    inits = dict(graph.initializers)
    guards = branch_guards(graph)
    for node in graph.nodes:
        branches = (node.attrs["then_branch"], node.attrs["else_branch"]) if node.op == "If" else ()
        if (
            not branches
            or not follows_data(graph, node.inputs[0])
            or any(get_schema(n.op).dynamic or n.op in _FAILS_ON_DATA for b in branches for n in b.nodes)
        ):
            nodes.append(node)
            continue
        infos = infos or graph.infer()
        outs = [
            [b.infer(dict(zip(b.inputs, (infos[i] for i in node.inputs[1:]))))[o] for o in b.outputs] for b in branches
        ]
        if any(a != b for a, b in zip(*outs)):
            nodes.append(node)
            continue
        # the condition first, so that a run can skip the steps of the branch it does not take
        scalar = f"{node.name}/condition"
        inits[f"{scalar}/shape"] = np.zeros(0, np.int64)
        nodes.append(Node("Reshape", [node.inputs[0], f"{scalar}/shape"], [scalar], {}, scalar))
        picked = {}
        for cond, branch in ((True, "then"), (False, "else")):
            body, body_inits = inline_if(node, cond)
            renamed = {out: f"{node.name}/{branch}:{out}" for out in node.outputs}
            for n in body:  # the branch's outputs under names of their own, for the Where
                n.inputs = [renamed.get(i, i) for i in n.inputs]
                n.outputs = [renamed.get(o, o) for o in n.outputs]
            nodes += body
            inits.update(body_inits)
            picked[branch] = renamed
            guards[f"{node.name}/{branch}"] = [scalar, cond]
        nodes += [
            Node("Where", [scalar, picked["then"][o], picked["else"][o]], [o], {}, f"{node.name}/select:{o}")
            for o in node.outputs
        ]
    if len(nodes) == len(graph.nodes):
        return graph
    return Graph(
        inputs=dict(graph.inputs),
        outputs=list(graph.outputs),
        nodes=nodes,
        initializers=inits,
        name=graph.name,
        metadata={**graph.metadata, BRANCH_GUARDS: json.dumps(guards)},
    )


def branch_guards(graph: Graph) -> dict:
    """lower_data_ifs' branches in `graph` (BRANCH_GUARDS): "<If>/then" -> [condition, value]."""
    return json.loads(graph.metadata.get(BRANCH_GUARDS, "{}"))


def branch_guard(guards: dict, values) -> tuple[str, bool] | None:
    """(the condition, the value it takes for them to be needed) where every one of `values` (a step's
    outputs) belongs to one branch that lower_data_ifs inlined, else None. A branch's values are named
    under "<If>/then/" or "<If>/then:" (inline_if and the outputs lower_data_ifs renames)."""
    found = None
    for value in values:
        if not value:
            continue
        keys = [k for k in guards if value.startswith((k + "/", k + ":"))]
        key = max(keys, key=len) if keys else None  # an If inlined in a branch: its own branch
        if key is None or found not in (None, key):
            return None
        found = key
    return None if found is None else (guards[found][0], bool(guards[found][1]))


def map_branches(graph: Graph, fn) -> Graph:
    """`graph` with every If's branches (nested ones too) replaced by fn(branch)."""
    nodes = []
    for node in graph.nodes:
        if node.op == "If":
            attrs = dict(node.attrs)
            for key in ("then_branch", "else_branch"):
                attrs[key] = map_branches(fn(attrs[key]), fn)
            node = Node(node.op, list(node.inputs), list(node.outputs), attrs, node.name)
        nodes.append(node)
    return Graph(
        inputs=dict(graph.inputs),
        outputs=list(graph.outputs),
        nodes=nodes,
        initializers=dict(graph.initializers),
        name=graph.name,
        metadata=dict(graph.metadata),
    )


def both_branches(graph: Graph) -> tuple[Graph, list[str]]:
    """`graph` with each If (nested ones too) replaced by the nodes of both its branches, and the
    If conditions: where every condition comes from, for value_sources. Not a graph to run (an If's
    outputs have two producers)."""
    nodes: list[Node] = []
    conditions: list[str] = []
    inits = dict(graph.initializers)
    pending = graph.nodes[::-1]
    while pending:
        node = pending.pop()
        if node.op != "If":
            nodes.append(node)
            continue
        conditions.append(node.inputs[0])
        for cond in (True, False):
            branch, branch_inits = inline_if(node, cond)
            inits.update(branch_inits)
            pending.extend(branch[::-1])
    flat = Graph(
        inputs=dict(graph.inputs), outputs=list(graph.outputs), nodes=nodes, initializers=inits, name=graph.name
    )
    return flat, conditions

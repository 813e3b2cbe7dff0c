"""Whether a graph treats the images of a batch independently (batch-separable).

A batch-separable graph gives, for a batch of N, the same result as N runs on its slices of one:
no op mixes values across axis 0. Session(batch_parallel=...) uses this to run a batch as slices on
several threads at once (session.py, _BatchRunner). The check is conservative: an op it does not know,
or knows only in forms that keep axis 0 apart, makes the graph non-separable, and it says which node
and why.

Values are "batched" (axis 0 is the batch) or constant across the batch (initializers, and what is
computed from them alone). An op with a batched input must keep axis 0 as the batch in every batched
input and its output, and must not broadcast a constant's axis 0 (of more than one) onto it.
"""

from __future__ import annotations

from .ir import Graph, Node, TensorInfo

#: element-wise ops (numpy broadcasting) and ops of one input that keep its shape
ELEMENTWISE = frozenset(
    "Add Sub Mul Div Pow Max Min Sum Mean Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor Not Where "
    "Relu Clip Sigmoid Tanh Silu Gelu HardSwish HardSigmoid LeakyRelu Elu Selu Celu Softplus Softsign Mish "
    "PRelu ThresholdedRelu Exp Log Sqrt Abs Neg Erf Reciprocal Floor Ceil Round Sign Sin Cos Identity Cast "
    "IsNaN IsInf BitShift Mod".split()
)
#: ops that read each image of input 0 alone (the other inputs: weights, constant parameters)
PER_IMAGE = frozenset(
    "Conv ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool LpPool LRN BatchNormalization "
    "InstanceNormalization DepthToSpace SpaceToDepth".split()
)
#: ops with an axis attribute that must not be 0 (the batch); default: the ONNX default
AXIS_OPS = {"Concat": None, "Softmax": -1, "LogSoftmax": -1, "LayerNormalization": -1, "Flatten": 1, "Gather": 0}
#: reductions: axes (attribute or constant input 1) must leave axis 0 alone and must be given
REDUCE = frozenset(
    "ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSumExp ReduceSumSquare".split()
)
#: views whose output keeps axis 0 of the input exactly when both have the same first dimension
RESHAPES = frozenset("Reshape Squeeze Unsqueeze".split())


def not_separable(graph: Graph, infos: dict[str, TensorInfo]) -> str | None:
    """None when `graph` is batch-separable at the shapes in `infos` (graph.infer's result for a
    batch of N), else why not: the first node that mixes the images, or an input or output whose
    axis 0 is not the batch."""
    shapes = {name: tuple(infos[name].shape) for name in infos}
    if not graph.inputs:
        return "the graph has no inputs"
    first = {shapes[name][0] if shapes[name] else None for name in graph.inputs}
    if len(first) != 1 or None in first:
        return "the inputs do not share a leading (batch) dimension"
    n = first.pop()
    batched = set(graph.inputs)
    for node in graph.nodes:
        ins = [i for i in node.inputs if i and i in batched]
        if not ins:
            continue  # computed from constants only: the same for every image
        why = _node_reason(node, ins, shapes, graph)
        if why is None and any(not shapes[o] or shapes[o][0] != n for o in node.outputs if o):
            why = "its output's first dimension is not the batch"
        if why is not None:
            return f"node {node.name or node.op} ({node.op}): {why}"
        batched.update(o for o in node.outputs if o)
    for name in graph.outputs:
        if name not in batched:
            return f"output {name!r} does not depend on the batch"
    return None


def _axis(node: Node, default, rank: int):
    axis = node.attrs.get("axis", default)
    return None if axis is None else axis + rank if axis < 0 else axis


def _node_reason(node: Node, ins: list[str], shapes: dict, graph: Graph) -> str | None:
    op, out_rank = node.op, len(shapes[node.outputs[0]]) if node.outputs and node.outputs[0] in shapes else 0
    if op in ELEMENTWISE:
        for name in node.inputs:
            if not name:
                continue
            shape = shapes[name]
            if name in ins and len(shape) != out_rank:
                return "a batched input of lower rank broadcasts its axis 0 elsewhere"
            if name not in ins and len(shape) == out_rank and shape[0] != 1:
                return "a constant input broadcasts over the batch axis"
        return None
    if op in PER_IMAGE:
        return None if ins == [node.inputs[0]] else "a batched weight or parameter"
    if op in AXIS_OPS:
        if node.inputs[0] not in ins or (op == "Gather" and len(ins) > 1):
            return "its batched input is not input 0"
        axis = _axis(node, AXIS_OPS[op], len(shapes[node.inputs[0]]))
        if op == "Concat" and len(ins) != len([i for i in node.inputs if i]):
            return "it joins batched and constant inputs"
        return None if axis != 0 else "it works along axis 0"
    if op in REDUCE:
        axes = node.attrs.get("axes")
        if axes is None and len(node.inputs) > 1 and node.inputs[1] in graph.initializers:
            axes = [int(a) for a in graph.initializers[node.inputs[1]].ravel()]
        rank = len(shapes[node.inputs[0]])
        if not axes or any((a + rank if a < 0 else a) == 0 for a in axes):
            return "it reduces over axis 0 (or over all axes)"
        return None
    if op in RESHAPES:
        if op == "Reshape":  # the one-image plan reshapes one image: the target's first entry must follow it
            target = list(node.attrs.get("shape") or [])
            keeps = (-1,) if node.attrs.get("allowzero", 0) else (0, -1)
            if not target or int(target[0]) not in keeps:
                return "its target shape does not keep the first dimension (0 or -1)"
        if shapes[node.inputs[0]][:1] != shapes[node.outputs[0]][:1]:
            return "it moves the batch axis"
        return None
    if op == "Transpose":
        perm = node.attrs.get("perm")
        return None if perm and perm[0] == 0 else "it moves axis 0"
    if op == "Gemm":
        if ins != [node.inputs[0]] or node.attrs.get("transA", 0):
            return "the batched operand is not A's rows"
        c = node.inputs[2] if len(node.inputs) > 2 else ""
        return None if not c or len(shapes[c]) < 2 or shapes[c][0] == 1 else "C broadcasts over the batch rows"
    if op == "MatMul":
        a, b = node.inputs[0], node.inputs[1]
        if a in ins and b not in ins and len(shapes[b]) <= 2:
            return None
        if a in ins and b in ins and len(shapes[a]) == len(shapes[b]) == out_rank >= 3:
            return None
        return "its operands' batch axes do not line up"
    return "the batch check does not know this op"

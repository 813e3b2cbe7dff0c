"""Rewrite a float graph into the int8 representation (docs/QUANT.md).

Conv, and Gemm/MatMul with a constant weight, become QLinearConv (a fully connected layer,
a MatMul on [N, ..., K] too, is a 1x1 convolution between two Reshapes) with uint8 activations, per-channel int8
weights and an int32 bias. A ReLU (or Clip(0, m)) that is the only reader of such a layer's
output is folded into it: the output's range starts at 0, so saturation at the zero point
is the ReLU. MaxPool, Reshape, Flatten, Squeeze, Unsqueeze, Transpose and Identity pass
uint8 through with the same scale. Every other op stays float (Rewrite.float_reasons says why
for the layers that do); QuantizeLinear and
DequantizeLinear are inserted at the borders, and graph outputs stay float under their names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import MnnError
from ..graph.ir import Graph, Node, unique_name
from ..graph.passes import eliminate_dead
from .params import activation_params, quantize_bias, quantize_weight, weight_scales

LAYER_OPS = ("Conv", "Gemm", "MatMul")  # the ops that become QLinearConv
PASSTHROUGH = ("MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity")


@dataclass
class QuantLayer:
    """One layer that became int8: where its float output was and where the int8 one is."""

    node: str
    op: str
    float_value: str  # the float graph's value (after a folded ReLU)
    q_value: str
    scale: float
    zero_point: int


@dataclass
class Rewrite:
    graph: Graph
    layers: list[QuantLayer] = field(default_factory=list)
    float_nodes: list[str] = field(default_factory=list)  # quantizable nodes left float (excluded)
    #: Conv/Gemm/MatMul nodes that stay float, and why (excluded ones too)
    float_reasons: dict[str, str] = field(default_factory=dict)


def fc_weight(graph: Graph, node: Node) -> np.ndarray | None:
    """The [M, K] weight of a Gemm/MatMul we can quantize, or None."""
    init = graph.initializers
    if len(node.inputs) < 2 or node.inputs[1] not in init:
        return None
    w = init[node.inputs[1]]
    if w.ndim != 2 or w.dtype != np.float32:
        return None
    if node.op == "MatMul":
        return w.T
    a = node.attrs
    if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
        return None
    if len(node.inputs) > 2 and node.inputs[2]:
        c = init.get(node.inputs[2])
        if c is None or c.size not in (1, w.shape[0] if a.get("transB", 0) else w.shape[1]) or c.ndim > 1:
            return None
    return w if a.get("transB", 0) else w.T


def quantizable(graph: Graph, node: Node, shapes: dict) -> bool:
    return node.op in LAYER_OPS and why_float(graph, node, shapes) is None


def why_float(graph: Graph, node: Node, shapes: dict) -> str | None:
    """Why a Conv, Gemm or MatMul stays float (None: it becomes QLinearConv)."""
    init = graph.initializers
    w = init.get(node.inputs[1]) if len(node.inputs) >= 2 else None
    if w is None:
        return "its weight is computed in the graph, not a constant"
    if w.dtype != np.float32:
        return f"its weight is {w.dtype}, not float32"
    if node.op == "Conv":
        if w.ndim != 4:
            return f"a {w.ndim - 2}-d convolution (only 2-d ones are quantized)"
        if node.attrs.get("activation", "none") != "none":
            return f"a fused {node.attrs['activation']} activation"
        if len(node.inputs) >= 3 and node.inputs[2] and node.inputs[2] not in init:
            return "its bias is computed in the graph, not a constant"
        return None
    shape = shapes.get(node.inputs[0], ())
    if len(shape) < 2 or (node.op == "Gemm" and len(shape) != 2):
        return f"its input has rank {len(shape)}"
    if not all(isinstance(d, (int, np.integer)) for d in shape[1:-1]):
        return f"its input {shape} has symbolic dims between the first and the last"
    if fc_weight(graph, node) is None:
        return "a weight of rank other than 2, transA, alpha or beta other than 1, or a bias that is not a vector"
    return None


def folded_activation(graph: Graph, node: Node, consumers) -> tuple[Node | None, float]:
    """The ReLU/Clip(0, m) this layer's output feeds alone, and its upper bound."""
    out = node.outputs[0]
    users = consumers.get(out, [])
    if len(users) != 1 or out in graph.outputs:
        return None, np.inf
    act = users[0]
    if act.op == "Relu":
        return act, np.inf
    if act.op == "Clip" and len(act.inputs) == 1 and act.attrs.get("min") == 0.0 and act.attrs.get("max", 0) > 0:
        return act, float(act.attrs["max"])
    return None, np.inf


def to_int8(
    graph: Graph, ranges: dict[str, tuple[float, float]], per_channel: bool = True, exclude=(), fuse_add: bool = True
) -> Rewrite:
    """The int8 graph, given a float range for every value that has to be quantized.

    fuse_add: an Add of two int8 values [and its Relu] becomes one QLinearAdd (False: float, between
    DequantizeLinear and QuantizeLinear, as before QLinearAdd existed; for comparisons)."""
    exclude = set(exclude)
    unknown = exclude - {n.name for n in graph.nodes}
    if unknown:
        raise MnnError(
            f"--exclude names node(s) {', '.join(sorted(unknown))} that the model does not have; "
            "`mnnx info MODEL --nodes` lists them"
        )
    shapes = {k: tuple(v.shape) for k, v in graph.infer().items()}
    consumers = graph.consumers()
    b = _Builder(graph, shapes)
    out = Rewrite(b.g)
    skip: set[int] = set()
    for node in graph.nodes:
        if id(node) in skip:
            continue
        layer = node.op in LAYER_OPS
        reason = why_float(graph, node, shapes) if layer else None
        if layer and reason is None and node.name in exclude:
            reason = "excluded"
            out.float_nodes.append(node.name)
        if reason is not None:
            out.float_reasons[node.name] = reason
        elif layer:
            act, upper = folded_activation(graph, node, consumers)
            if act is not None:
                skip.add(id(act))
            out.layers.append(b.layer(node, act, upper, ranges, per_channel))
            continue
        if fuse_add and node.op == "Add" and node.name not in exclude and b.can_add(node, ranges, consumers):
            act, _ = folded_activation(graph, node, consumers)
            if act is not None and act.op != "Relu":
                act = None  # a Clip's upper bound is not a saturation point of the output's scale
            if act is not None:
                skip.add(id(act))
            b.add(node, act, ranges)
            continue
        if node.op in PASSTHROUGH and node.inputs[0] in b.q and node.inputs[0] not in b.f and len(node.outputs) == 1:
            b.passthrough(node)
            continue
        b.float_node(node)
    for name in graph.outputs:
        b.need_float(name)
    out.graph = eliminate_dead(b.g)
    out.graph.validate()
    return out


class _Builder:
    def __init__(self, src: Graph, shapes: dict):
        self.src, self.shapes = src, shapes
        self.g = Graph(
            inputs=dict(src.inputs),
            outputs=list(src.outputs),
            name=src.name,
            metadata={**src.metadata, "mnn.quant": "int8"},
        )
        self.taken = set(src.inputs) | set(src.initializers) | {o for n in src.nodes for o in n.outputs}
        self.taken |= {n.name for n in src.nodes}
        self.f = set(src.inputs)  # values available as float
        self.q: dict[str, tuple[str, str, str]] = {}  # value -> (uint8 value, scale name, zero point name)
        self.nk11: dict[str, str] = {}  # uint8 [N, K] value -> the [N, K, 1, 1] one it was reshaped from
        self.w_zero = ""  # one shared int8 zero: weights are symmetric

    def fresh(self, base: str) -> str:
        name = unique_name(self.taken, base)
        self.taken.add(name)
        return name

    def const(self, base: str, value) -> str:
        name = self.fresh(base)
        self.g.initializers[name] = np.asarray(value)
        return name

    def emit(self, op: str, inputs: list[str], outputs: list[str], attrs: dict, name: str) -> None:
        self.g.nodes.append(Node(op, inputs, outputs, attrs, self.fresh(name)))

    def weight_zero(self) -> str:
        if not self.w_zero:
            self.w_zero = self.const("weight_zero_point", np.int8(0))
        return self.w_zero

    def need_float(self, value: str) -> str:
        if value in self.f or value in self.g.initializers:
            return value
        if value in self.src.initializers:
            self.g.initializers[value] = self.src.initializers[value]
            return value
        qv, s, z = self.q[value]
        self.emit("DequantizeLinear", [qv, s, z], [value], {}, f"{value}.dequantize")
        self.f.add(value)
        return value

    def need_q(self, value: str, ranges) -> tuple[str, str, str, np.float32]:
        if value not in self.q:
            if value not in ranges:
                raise MnnError(f"no calibrated range for value {value!r}; the calibration did not observe it")
            scale, zp = activation_params(*ranges[value])
            s, z = self.const(f"{value}.scale", scale), self.const(f"{value}.zero_point", zp)
            qv = self.fresh(f"{value}.q")
            self.emit("QuantizeLinear", [self.need_float(value), s, z], [qv], {}, f"{value}.quantize")
            self.q[value] = (qv, s, z)
        qv, s, z = self.q[value]
        return qv, s, z, self.g.initializers[s]

    def float_node(self, node: Node) -> None:
        ins = [self.need_float(n) if n else "" for n in node.inputs]
        self.g.nodes.append(Node(node.op, ins, list(node.outputs), dict(node.attrs), node.name))
        self.f.update(node.outputs)

    def passthrough(self, node: Node) -> None:
        qv, s, z = self.q[node.inputs[0]]
        out = self.fresh(f"{node.outputs[0]}.q")
        ins = [qv] + [self.need_float(n) if n else "" for n in node.inputs[1:]]
        self.g.nodes.append(Node(node.op, ins, [out], dict(node.attrs), node.name))
        self.q[node.outputs[0]] = (out, s, z)

    def can_add(self, node: Node, ranges, consumers) -> bool:
        """An Add of two int8 values whose output (after a Relu reading it alone) has a range."""
        if len(node.inputs) != 2 or node.attrs.get("activation", "none") != "none":
            return False
        if not all(v in self.q for v in node.inputs):
            return False
        act, _ = folded_activation(self.src, node, consumers)
        y = act.outputs[0] if act is not None and act.op == "Relu" else node.outputs[0]
        return y in ranges

    def add(self, node: Node, act: Node | None, ranges) -> None:
        """DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear as one QLinearAdd (a Relu is C_zero_point 0)."""
        y = act.outputs[0] if act is not None else node.outputs[0]
        lo, hi = ranges[y]
        if act is not None:
            lo, hi = 0.0, max(hi, 0.0)
        scale, zp = activation_params(lo, hi)
        (qa, sa, za), (qb, sb, zb) = self.q[node.inputs[0]], self.q[node.inputs[1]]
        s, z = self.const(f"{y}.scale", scale), self.const(f"{y}.zero_point", zp)
        qy = self.fresh(f"{y}.q")
        self.g.nodes.append(Node("QLinearAdd", [qa, sa, za, qb, sb, zb, s, z], [qy], {}, node.name))
        self.q[y] = (qy, s, z)

    def layer(self, node: Node, act: Node | None, upper: float, ranges, per_channel: bool) -> QuantLayer:
        init = self.src.initializers
        x = node.inputs[0]
        y = act.outputs[0] if act is not None else node.outputs[0]
        if y not in ranges:
            raise MnnError(f"no calibrated range for value {y!r} (output of {node.name!r})")
        lo, hi = ranges[y]
        if act is not None:
            lo, hi = 0.0, min(max(hi, 0.0), upper)
        qx, sx, zx, x_scale = self.need_q(x, ranges)
        y_scale, y_zp = activation_params(lo, hi)
        if node.op == "Conv":
            w = init[node.inputs[1]]
            bias = init[node.inputs[2]] if len(node.inputs) > 2 and node.inputs[2] else None
            attrs = {k: v for k, v in node.attrs.items() if not k.startswith("act") and k != "activation"}
        else:
            w2 = fc_weight(self.src, node)
            w = w2.reshape(w2.shape + (1, 1))
            bias = init[node.inputs[2]] if node.op == "Gemm" and len(node.inputs) > 2 and node.inputs[2] else None
            if bias is not None and bias.size == 1:
                bias = np.full(w.shape[0], float(bias.reshape(())), np.float32)
            attrs = {}
        w_scale = weight_scales(w, per_channel)
        wq = quantize_weight(w, w_scale)
        base = node.name
        ins = [
            qx,
            sx,
            zx,
            self.const(f"{base}.weight_q", wq),
            self.const(f"{base}.weight_scale", w_scale),
            self.weight_zero(),
            self.const(f"{base}.y_scale", y_scale),
            self.const(f"{base}.y_zero_point", y_zp),
        ]
        if bias is not None:
            ins.append(self.const(f"{base}.bias_q", quantize_bias(bias, x_scale, w_scale)))
        qy = self.fresh(f"{y}.q")
        if node.op == "Conv":
            self.g.nodes.append(Node("QLinearConv", ins, [qy], attrs, node.name))
        else:  # [N, ..., K] -> [N * ..., K, 1, 1] -> 1x1 QLinearConv -> [N, ..., M]
            r = self.nk11.get(qx)
            if r is None:
                r = self.fresh(f"{qx}.nk11")
                self.emit("Reshape", [qx], [r], {"shape": [-1, int(w.shape[1]), 1, 1]}, f"{base}.to_nchw")
            c = self.fresh(f"{qy}.nm11")
            self.g.nodes.append(Node("QLinearConv", [r] + ins[1:], [c], attrs, node.name))
            lead = [int(d) for d in self.shapes[x][1:-1]]  # a MatMul on [N, ..., K]: the rows are N * ...
            self.emit("Reshape", [c], [qy], {"shape": [-1, *lead, int(w.shape[0])]}, f"{base}.to_nm")
            self.nk11[qy] = c
        self.q[y] = (qy, ins[6], ins[7])
        # the report reads the QLinearConv's own output (a following Reshape may be dropped as dead)
        return QuantLayer(node.name, node.op, y, qy if node.op == "Conv" else c, float(y_scale), int(y_zp))


def weight_only(graph: Graph, per_channel: bool = True, exclude=()) -> Rewrite:
    """Weights stored int8 (DequantizeLinear of int8 initializers), compute in float.

    A session folds the DequantizeLinear into float32 weights once, at load."""
    shapes = {k: tuple(v.shape) for k, v in graph.infer().items()}
    g = graph.copy()
    g.metadata["mnn.quant"] = "int8-weights"
    out = Rewrite(g)
    taken = set(g.initializers) | {o for n in g.nodes for o in n.outputs} | set(g.inputs) | {n.name for n in g.nodes}
    new_nodes = []
    users = graph.consumers()
    for node in g.nodes:
        if quantizable(graph, node, shapes) and node.name not in exclude and len(users.get(node.inputs[1], [])) == 1:
            w = g.initializers[node.inputs[1]]
            transposed = node.op == "MatMul" or (node.op == "Gemm" and not node.attrs.get("transB", 0))
            wm = w.T if transposed else w  # output channels on axis 0
            scale = weight_scales(wm, per_channel)
            q = quantize_weight(wm, scale)
            qn = unique_name(taken, f"{node.name}.weight_q")
            sn = unique_name(taken | {qn}, f"{node.name}.weight_scale")
            dn = unique_name(taken | {qn, sn}, f"{node.name}.weight")
            taken |= {qn, sn, dn}
            g.initializers[qn] = q.T.copy() if transposed else q
            g.initializers[sn] = scale
            new_nodes.append(
                Node(
                    "DequantizeLinear",
                    [qn, sn],
                    [dn],
                    {"axis": 1 if transposed else 0},
                    unique_name(taken, f"{node.name}.dequantize_weight"),
                )
            )
            taken.add(new_nodes[-1].name)
            del g.initializers[node.inputs[1]]
            node.inputs = [node.inputs[0], dn] + node.inputs[2:]
            out.layers.append(QuantLayer(node.name, node.op, node.outputs[0], node.outputs[0], 0.0, 0))
        elif node.name in exclude:
            out.float_nodes.append(node.name)
            out.float_reasons[node.name] = "excluded"
        new_nodes.append(node)
    g.nodes = new_nodes
    g.validate()
    return out

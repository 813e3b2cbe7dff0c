"""A Graph (imported from ONNX, loaded from .mnn) as a trainable Module.

    backbone = nn.from_graph(mnn_core.load("lenet.mnn"), output="flatten")
    model = nn.Sequential(backbone, nn.Linear(400, 10))   # a new head

Float initializers become Parameters (batch-norm statistics become buffers,
integer constants stay constant buffers); forward runs the graph's nodes
through express, so the model trains, traces and exports like any Module.
Activations fused into Conv/Gemm/MatMul that cannot be differentiated from
the output alone are split off again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..errors import MnnError
from ..express import apply
from ..express import functional as F
from ..graph.ir import Graph, Node
from ..graph.passes import eliminate_dead
from .module import Module, Parameter

_UNFUSED_OPS = {
    "leaky_relu": ("LeakyRelu", {"alpha": "act_alpha"}),
    "silu": ("Silu", {}),
    "gelu": ("Gelu", {}),
    "hard_sigmoid": ("HardSigmoid", {"alpha": "act_alpha", "beta": "act_beta"}),
    "hard_swish": ("HardSwish", {}),
}


def _unfuse(graph: Graph) -> None:
    nodes = []
    for node in graph.nodes:
        kind = node.attrs.get("activation", "none")
        nodes.append(node)
        if kind in _UNFUSED_OPS:
            op, params = _UNFUSED_OPS[kind]
            pre = f"{node.outputs[0]}:pre_activation"
            attrs = {k: node.attrs[v] for k, v in params.items()}
            nodes.append(Node(op, [pre], [node.outputs[0]], attrs, f"{node.name}:{kind}"))
            node.outputs = [pre] + node.outputs[1:]
            node.attrs = {**node.attrs, "activation": "none"}
    graph.nodes = nodes


def _key(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z_.]", "_", name)


class GraphModule(Module):
    """Runs a Graph's nodes with express; its initializers are the module's state."""

    def __init__(self, graph: Graph, outputs: str | Sequence[str] | None = None):
        super().__init__()
        g = graph.copy()
        if outputs is not None:
            wanted = [outputs] if isinstance(outputs, str) else list(outputs)
            known = {o for n in g.nodes for o in n.outputs} | set(g.inputs)
            unknown = [o for o in wanted if o not in known]
            if unknown:
                raise MnnError(
                    f"from_graph: no value named {unknown} in graph {g.name!r}; values: "
                    f"{', '.join(sorted(known))[:400]}"
                )
            g.outputs = wanted
            g = eliminate_dead(g)
        _unfuse(g)
        object.__setattr__(self, "graph", g)
        statistics = {n for node in g.nodes if node.op == "BatchNormalization" for n in node.inputs[3:5]}
        self._names: dict[str, str] = {}
        for name, arr in g.initializers.items():
            key = _key(name)
            self._names[name] = key
            if arr.dtype.kind == "f" and name not in statistics:
                self._parameters[key] = Parameter(np.array(arr))
            else:
                self.register_buffer(key, arr)

    def forward(self, *inputs):
        g = self.graph
        if len(inputs) != len(g.inputs):
            raise MnnError(
                f"graph {g.name!r} takes {len(g.inputs)} input(s) ({', '.join(g.inputs)}), got {len(inputs)}"
            )
        env = dict(zip(g.inputs, inputs))
        state = {**self._parameters, **self._buffers}
        env.update({name: state[key] for name, key in self._names.items()})
        for node in g.nodes:
            ins = [env[n] if n else None for n in node.inputs]
            if node.op == "BatchNormalization" and self.training:
                x, scale, bias, mean, var = ins
                outs = [
                    F.batch_norm(
                        x,
                        mean,
                        var,
                        scale,
                        bias,
                        True,
                        1.0 - node.attrs.get("momentum", 0.9),
                        node.attrs.get("epsilon", 1e-5),
                    )
                ]
            else:
                res = apply(node.op, *ins, n_outputs=len(node.outputs), **node.attrs)
                outs = [res] if len(node.outputs) == 1 else list(res)
            env.update(zip(node.outputs, outs))
        results = [env[o] for o in g.outputs]
        return results[0] if len(results) == 1 else tuple(results)

    def extra_repr(self) -> str:
        return f"{self.graph.name!r}: {len(self.graph.nodes)} nodes, outputs {self.graph.outputs}"


def from_graph(graph: Graph | str, output: str | Sequence[str] | None = None) -> GraphModule:
    """A trainable Module from a Graph or a model file; `output` cuts the graph at that value."""
    if not isinstance(graph, Graph):
        from ..runtime.loader import load

        graph = load(graph)
    return GraphModule(graph, output)

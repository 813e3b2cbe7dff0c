"""Run an mnn Graph in PyTorch eager mode, one torch.nn.functional call per node.

This is how the benchmark gives PyTorch the very same model (weights and all)
without a second hand-written copy of each architecture.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

_ACT = {
    "none": lambda x, a, b: x,
    "relu": lambda x, a, b: F.relu(x),
    "clip": lambda x, a, b: torch.clamp(x, a, b),
    "sigmoid": lambda x, a, b: torch.sigmoid(x),
    "silu": lambda x, a, b: F.silu(x),
    "gelu": lambda x, a, b: F.gelu(x),
    "hard_swish": lambda x, a, b: F.hardswish(x),
}


def _pads(attrs):
    p = attrs.get("pads") or [0, 0, 0, 0]
    if p[0] != p[2] or p[1] != p[3]:
        raise NotImplementedError("asymmetric padding")
    return (p[0], p[1])


def _conv(x, w, b=None, attrs=None):
    y = F.conv2d(
        x,
        w,
        b,
        stride=attrs["strides"] or 1,
        padding=_pads(attrs),
        dilation=attrs["dilations"] or 1,
        groups=attrs["group"],
    )
    return _ACT[attrs["activation"]](y, attrs["act_alpha"], attrs["act_beta"])


def _gemm(a, b, c=None, attrs=None):
    a = a.t() if attrs["transA"] else a
    b = b.t() if attrs["transB"] else b
    y = attrs["alpha"] * (a @ b) + (attrs["beta"] * c if c is not None else 0)
    return _ACT[attrs["activation"]](y, attrs["act_alpha"], attrs["act_beta"])


OPS = {
    "Conv": _conv,
    "Gemm": _gemm,
    "MatMul": lambda a, b, attrs: _ACT[attrs["activation"]](a @ b, attrs["act_alpha"], attrs["act_beta"]),
    "BatchNormalization": lambda x, s, b, m, v, attrs: F.batch_norm(x, m, v, s, b, False, 0.0, attrs["epsilon"]),
    "Relu": lambda x, attrs: F.relu(x),
    "Clip": lambda x, attrs: torch.clamp(x, attrs["min"], attrs["max"]),
    "Add": lambda a, b, attrs: a + b,
    "Mul": lambda a, b, attrs: a * b,
    "GlobalAveragePool": lambda x, attrs: F.adaptive_avg_pool2d(x, 1),
    "Flatten": lambda x, attrs: torch.flatten(x, attrs["axis"]),
    "Reshape": lambda x, attrs: x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate(attrs["shape"])]),
    "MaxPool": lambda x, attrs: F.max_pool2d(
        x, attrs["kernel_shape"], attrs["strides"] or 1, _pads(attrs), ceil_mode=bool(attrs["ceil_mode"])
    ),
    "Concat": lambda *xs, attrs: torch.cat(xs, attrs["axis"]),
    "Identity": lambda x, attrs: x,
}


class TorchGraph(torch.nn.Module):
    def __init__(self, graph):
        super().__init__()
        graph.validate()  # fills attribute defaults
        self.graph = graph
        self.names = {k: f"c{i}" for i, k in enumerate(graph.initializers)}  # buffers move with .to(device)
        for k, v in graph.initializers.items():
            self.register_buffer(self.names[k], torch.from_numpy(v.copy()))
        missing = sorted({n.op for n in graph.nodes} - set(OPS))
        if missing:
            raise NotImplementedError(f"torch interpreter lacks {missing}")

    def forward(self, x):
        env = {k: getattr(self, name) for k, name in self.names.items()}
        env[next(iter(self.graph.inputs))] = x
        for node in self.graph.nodes:
            args = [env[n] if n else None for n in node.inputs]
            env[node.outputs[0]] = OPS[node.op](*args, attrs=node.attrs)
        return [env[o] for o in self.graph.outputs]

"""ONNX's preview training ops (domain ai.onnx.preview.training): Momentum, Adagrad, Adam.

Inputs: R (learning rate, scalar), T (update count, scalar int64), then n tensors X,
n gradients G and the optimizer states (V / H); outputs: the n updated X, then the
updated states, in ONNX's order. Each op updates any number of tensors at once.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ._util import rand
from .schema import Attr, OpSchema, Sample, register

#: op -> number of per-tensor inputs after R and T (X, G, states...) and of outputs per tensor
LAYOUT = {"Momentum": 3, "Adagrad": 3, "Adam": 4}


def _infer(op):
    per = LAYOUT[op]

    def infer(ins, attrs):
        n, rest = divmod(len(ins) - 2, per)
        if rest or n < 1:
            raise GraphError(f"{op} takes R, T and {per} tensors per updated tensor, got {len(ins)} inputs")
        xs = ins[2 : 2 + n]
        states = ins[2 + 2 * n :]
        return list(xs) + list(states)

    return infer


def _split(ins, per):
    n = (len(ins) - 2) // per
    groups = [ins[2 + i * n : 2 + (i + 1) * n] for i in range(per)]
    return float(np.asarray(ins[0])), int(np.asarray(ins[1])), n, groups


def _momentum(ins, attrs):
    r, t, n, (xs, gs, vs) = _split(ins, 3)
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        gr = attrs["norm_coefficient"] * x + g
        v2 = attrs["alpha"] * v + (attrs["beta"] if t > 0 else 1.0) * gr
        x2 = x - r * (gr + attrs["alpha"] * v2) if attrs["mode"] == "nesterov" else x - r * v2
        new_x.append(x2.astype(x.dtype))
        new_v.append(v2.astype(v.dtype))
    return new_x + new_v


def _adagrad(ins, attrs):
    r, t, n, (xs, gs, hs) = _split(ins, 3)
    rate = r / (1 + t * attrs["decay_factor"])
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        gr = attrs["norm_coefficient"] * x + g
        h2 = h + gr * gr
        new_x.append((x - rate * gr / (np.sqrt(h2) + attrs["epsilon"])).astype(x.dtype))
        new_h.append(h2.astype(h.dtype))
    return new_x + new_h


def _adam(ins, attrs):
    r, t, n, (xs, gs, vs, hs) = _split(ins, 4)
    a, b = attrs["alpha"], attrs["beta"]
    rate = r * np.sqrt(1 - b**t) / (1 - a**t) if t > 0 else r
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        gr = attrs["norm_coefficient"] * x + g
        v2 = a * v + (1 - a) * gr
        h2 = b * h + (1 - b) * gr * gr
        x2 = (1 - attrs["norm_coefficient_post"]) * (x - rate * v2 / (np.sqrt(h2) + attrs["epsilon"]))
        new_x.append(x2.astype(x.dtype))
        new_v.append(v2.astype(v.dtype))
        new_h.append(h2.astype(h.dtype))
    return new_x + new_v + new_h


def _samples(op):
    per = LAYOUT[op]

    def samples(rng):
        for n in (1, 2):
            tensors = [rand(rng, 3, 2) for _ in range(n * per)]
            if op != "Momentum":
                for i in range((per - 1) * n, per * n):  # squared-gradient states are positive
                    tensors[i] = np.abs(tensors[i])
            yield Sample([np.float32(0.1), np.int64(n)] + tensors, label=f"{n} tensor(s)")

    return samples


_ATTRS = {
    "Momentum": {
        "alpha": Attr("float"),
        "beta": Attr("float"),
        "mode": Attr("str", "standard", ("standard", "nesterov")),
        "norm_coefficient": Attr("float"),
    },
    "Adagrad": {
        "decay_factor": Attr("float", 0.0),
        "epsilon": Attr("float", 0.0),
        "norm_coefficient": Attr("float", 0.0),
    },
    "Adam": {
        "alpha": Attr("float", 0.9),
        "beta": Attr("float", 0.999),
        "epsilon": Attr("float", 0.0),
        "norm_coefficient": Attr("float", 0.0),
        "norm_coefficient_post": Attr("float", 0.0),
    },
}
_SAMPLE_ATTRS = {"Momentum": {"alpha": 0.9, "beta": 0.1, "norm_coefficient": 0.01}}

for _op, _fn in (("Momentum", _momentum), ("Adagrad", _adagrad), ("Adam", _adam)):

    def _with_attrs(rng, op=_op):
        for s in _samples(op)(rng):
            s.attrs.update(_SAMPLE_ATTRS.get(op, {}))
            yield s

    register(
        OpSchema(
            _op,
            infer=_infer(_op),
            reference=_fn,
            attrs=_ATTRS[_op],
            n_inputs=(2 + LAYOUT[_op], 2 + 8 * LAYOUT[_op]),
            n_outputs=8 * (LAYOUT[_op] - 1),
            samples=_with_attrs,
            doc=f"ONNX's {_op} optimizer step (ai.onnx.preview.training) on one or more tensors.",
        )
    )

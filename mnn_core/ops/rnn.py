"""Recurrent layers with ONNX semantics: RNN, GRU and LSTM.

Inputs (ONNX order; "" for absent optional ones):
    X [seq, batch, input] (layout=1: [batch, seq, input]), W, R, B, sequence_lens,
    initial_h, (LSTM:) initial_c, P (peepholes).
Outputs: Y [seq, directions, batch, hidden] (layout=1: [batch, seq, directions,
hidden]), Y_h [directions, batch, hidden], (LSTM:) Y_c.

Gate order in W/R/B is ONNX's: LSTM i, o, f, c; GRU z, r, h. The reference
kernels loop over time steps in float64, one direction at a time; steps past a
batch entry's sequence length leave its state alone and write zeros to Y.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ..graph.symbolic import is_sym
from ._util import rand
from .schema import Attr, OpSchema, Sample, register


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


#: activation name -> f(x, alpha, beta), with ONNX's default alpha/beta
ACTIVATIONS = {
    "Sigmoid": (lambda x, a, b: _sigmoid(x), None, None),
    "Tanh": (lambda x, a, b: np.tanh(x), None, None),
    "Relu": (lambda x, a, b: np.maximum(x, 0), None, None),
    "Affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "LeakyRelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "ThresholdedRelu": (lambda x, a, b: np.where(x > a, x, 0), 1.0, None),
    "ScaledTanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "HardSigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "Elu": (lambda x, a, b: np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0)) - 1)), 1.0, None),
    "Softsign": (lambda x, a, b: x / (1 + np.abs(x)), None, None),
    "Softplus": (lambda x, a, b: np.logaddexp(0, x), None, None),
}

DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _attrs(op: str) -> dict:
    attrs = {
        "hidden_size": Attr("int"),
        "direction": Attr("str", "forward", DIRECTIONS),
        "activation_names": Attr("str", "", doc="comma-separated activation functions, empty: ONNX's defaults"),
        "activation_alpha": Attr("floats", []),
        "activation_beta": Attr("floats", []),
        "clip": Attr("float", 0.0, doc="clip gate inputs to [-clip, clip]; 0: no clipping"),
        "layout": Attr("int", 0, (0, 1)),
    }
    if op == "GRU":
        attrs["linear_before_reset"] = Attr("int", 0, (0, 1))
    if op == "LSTM":
        attrs["input_forget"] = Attr("int", 0, (0, 1))
    return attrs


def _activations(op: str, attrs: dict, directions: int) -> list:
    names = [n for n in attrs["activation_names"].split(",") if n] or DEFAULT_ACTIVATIONS[op] * directions
    per_dir = len(DEFAULT_ACTIVATIONS[op])
    if len(names) == per_dir and directions == 2:
        names = names * 2
    if len(names) != per_dir * directions:
        raise GraphError(f"{op}: {len(names)} activations given, {per_dir * directions} needed")
    alphas, betas = list(attrs["activation_alpha"]), list(attrs["activation_beta"])
    fns = []
    for name in names:
        if name not in ACTIVATIONS:
            raise GraphError(f"{op}: unknown activation {name!r}; known: {', '.join(ACTIVATIONS)}")
        fn, da, db = ACTIVATIONS[name]
        a = alphas.pop(0) if da is not None and alphas else da
        b = betas.pop(0) if db is not None and betas else db
        fns.append(lambda x, fn=fn, a=a, b=b: fn(x, a, b))
    return [fns[i * per_dir : (i + 1) * per_dir] for i in range(directions)]


def _infer(op):
    def infer(ins, attrs):
        x, w, r = ins[0], ins[1], ins[2]
        if len(x.shape) != 3:
            raise GraphError(f"{op}: X must be 3-D, got {x.shape}")
        seq, batch = (x.shape[0], x.shape[1]) if attrs["layout"] == 0 else (x.shape[1], x.shape[0])
        dirs = 2 if attrs["direction"] == "bidirectional" else 1
        h = attrs["hidden_size"]
        g = GATES[op]
        size = x.shape[2] if not is_sym(x.shape[2]) else w.shape[2]  # (a symbolic input size: W's)
        if w.shape != (dirs, g * h, size) or r.shape != (dirs, g * h, h):
            raise GraphError(
                f"{op}: W {w.shape} / R {r.shape} do not match {dirs} direction(s), "
                f"hidden_size {h}, input size {x.shape[2]} (want W {(dirs, g * h, x.shape[2])})"
            )
        _activations(op, attrs, dirs)
        y = (seq, dirs, batch, h) if attrs["layout"] == 0 else (batch, seq, dirs, h)
        state = (dirs, batch, h) if attrs["layout"] == 0 else (batch, dirs, h)
        outs = [TensorInfo(y, x.dtype), TensorInfo(state, x.dtype)]
        if op == "LSTM":
            outs.append(TensorInfo(state, x.dtype))
        return outs

    return infer


def _get(ins, i):
    return ins[i] if i < len(ins) and ins[i] is not None else None


def _reference(op):
    def kernel(ins, attrs):
        x = ins[0].astype(np.float64)
        if attrs["layout"] == 1:
            x = x.transpose(1, 0, 2)
        seq, batch, _ = x.shape
        hsize = attrs["hidden_size"]
        dirs = 2 if attrs["direction"] == "bidirectional" else 1
        g = GATES[op]
        w, r = ins[1].astype(np.float64), ins[2].astype(np.float64)
        b = _get(ins, 3)
        b = np.zeros((dirs, 2 * g * hsize)) if b is None else b.astype(np.float64)
        lens = _get(ins, 4)
        lens = np.full(batch, seq, np.int64) if lens is None else lens.astype(np.int64)
        h0 = _state(_get(ins, 5), dirs, batch, hsize, attrs["layout"])
        c0 = _state(_get(ins, 6), dirs, batch, hsize, attrs["layout"]) if op == "LSTM" else None
        p = _get(ins, 7) if op == "LSTM" else None
        p = np.zeros((dirs, 3 * hsize)) if p is None else p.astype(np.float64)
        acts = _activations(op, attrs, dirs)
        y = np.zeros((seq, dirs, batch, hsize))
        yh = np.zeros((dirs, batch, hsize))
        yc = np.zeros((dirs, batch, hsize))
        for d in range(dirs):
            reverse = attrs["direction"] == "reverse" or d == 1
            step = {"RNN": _rnn_step, "GRU": _gru_step, "LSTM": _lstm_step}[op]
            params = dict(
                w=w[d],
                r=r[d],
                wb=b[d, : g * hsize],
                rb=b[d, g * hsize :],
                p=p[d],
                acts=acts[d],
                clip=attrs["clip"],
                attrs=attrs,
                hsize=hsize,
            )
            h, c = h0[d].copy(), (c0[d].copy() if c0 is not None else None)
            for t in range(seq):
                active = (t < lens)[:, None]
                # reversed: each batch entry runs its own valid steps backwards
                idx = np.where(lens > t, lens - 1 - t, 0) if reverse else np.full(batch, t)
                xt = x[idx, np.arange(batch)]
                h_new, c_new = step(xt, h, c, **params)
                h = np.where(active, h_new, h)
                if c is not None:
                    c = np.where(active, c_new, c)
                y[idx, d, np.arange(batch)] = np.where(active, h_new, y[idx, d, np.arange(batch)])
            yh[d] = h
            if c is not None:
                yc[d] = c
        dtype = ins[0].dtype
        if attrs["layout"] == 1:
            y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
        outs = [y.astype(dtype), yh.astype(dtype)]
        if op == "LSTM":
            outs.append(yc.astype(dtype))
        return outs

    return kernel


def _state(s, dirs, batch, hsize, layout):
    if s is None:
        return np.zeros((dirs, batch, hsize))
    s = s.astype(np.float64)
    return s.transpose(1, 0, 2) if layout == 1 else s


def _clip(v, clip):
    return np.clip(v, -clip, clip) if clip > 0 else v


def _rnn_step(xt, h, c, w, r, wb, rb, p, acts, clip, attrs, hsize):
    return acts[0](_clip(xt @ w.T + h @ r.T + wb + rb, clip)), None


def _gru_step(xt, h, c, w, r, wb, rb, p, acts, clip, attrs, hsize):
    f, g = acts
    gx = xt @ w.T + wb
    wz, wr, wh = np.split(gx, 3, axis=1)
    rz, rr, rh = np.split(r, 3, axis=0)
    bz, br, bh = np.split(rb, 3)
    z = f(_clip(wz + h @ rz.T + bz, clip))
    rt = f(_clip(wr + h @ rr.T + br, clip))
    if attrs["linear_before_reset"]:
        ht = g(_clip(wh + rt * (h @ rh.T + bh), clip))
    else:
        ht = g(_clip(wh + (rt * h) @ rh.T + bh, clip))
    return (1 - z) * ht + z * h, None


def _lstm_step(xt, h, c, w, r, wb, rb, p, acts, clip, attrs, hsize):
    f, g, hact = acts
    gates = xt @ w.T + h @ r.T + wb + rb
    gi, go, gf, gc = np.split(gates, 4, axis=1)
    pi, po, pf = np.split(p, 3)
    i = f(_clip(gi + pi * c, clip))
    fg = 1 - i if attrs["input_forget"] else f(_clip(gf + pf * c, clip))
    ct = g(_clip(gc, clip))
    c_new = fg * c + i * ct
    o = f(_clip(go + po * c_new, clip))
    return o * hact(c_new), c_new


def _samples(op):
    g = GATES[op]

    def samples(rng):
        for seq, batch, inp, hid, extra in [
            (4, 2, 3, 5, {}),
            (3, 3, 2, 4, {"direction": "bidirectional"}),
            (5, 1, 4, 3, {"direction": "reverse"}),
            (2, 2, 3, 2, {"layout": 1}),
        ]:
            dirs = 2 if extra.get("direction") == "bidirectional" else 1
            x = rand(rng, batch, seq, inp) if extra.get("layout") else rand(rng, seq, batch, inp)
            ins = [x, rand(rng, dirs, g * hid, inp), rand(rng, dirs, g * hid, hid), rand(rng, dirs, 2 * g * hid)]
            yield Sample(ins, {"hidden_size": hid, **extra}, label=f"seq{seq} batch{batch} {extra}")
        # sequence lengths and an initial state
        x, dirs, hid = rand(rng, 4, 3, 2), 1, 3
        ins = [
            x,
            rand(rng, 1, g * hid, 2),
            rand(rng, 1, g * hid, hid),
            rand(rng, 1, 2 * g * hid),
            np.array([4, 2, 1], np.int32),
            rand(rng, 1, 3, hid),
        ]
        yield Sample(ins, {"hidden_size": hid}, label="sequence_lens, initial_h")

    return samples


for _op, _n_in in (("RNN", 6), ("GRU", 6), ("LSTM", 8)):
    register(
        OpSchema(
            _op,
            infer=_infer(_op),
            reference=_reference(_op),
            attrs=_attrs(_op),
            n_inputs=(3, _n_in),
            n_outputs=3 if _op == "LSTM" else 2,
            samples=_samples(_op),
            flops=lambda ins, outs, attrs, g=GATES[_op]: (
                2.0 * outs[0].size * g * (ins[1].shape[2] + attrs["hidden_size"])
            ),
            doc=f"{_op} layer with ONNX semantics (gates, directions, sequence lengths, layout).",
        )
    )

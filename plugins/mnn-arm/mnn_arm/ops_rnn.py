"""RNN, GRU and LSTM on Arm (csrc/rnn.c), float32, ONNX semantics with the default activations:
forward / reverse / bidirectional, layout 0 and 1, sequence_lens, initial states, clip, peepholes,
input_forget and linear_before_reset. W, R, B and P are constant (packed at prepare); X, the
sequence lengths and the initial states arrive at run."""

from __future__ import annotations

import numpy as np

from . import _arm
from ._common import kernel, static_shape

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
CELLS = {"RNN": 0, "GRU": 1, "LSTM": 2}
#: the ONNX default activations per cell: the only ones the C cell runs
DEFAULT_ACTS = {"RNN": ["tanh"], "GRU": ["sigmoid", "tanh"], "LSTM": ["sigmoid", "tanh", "tanh"]}


def _supports(node, ins):
    if ins[0].dtype != "float32" or len(ins[0].shape) != 3:
        return "float32 X of 3 dims"
    names = node.attrs.get("activation_names") or ""
    names = [n.strip().lower() for n in (names.split(",") if isinstance(names, str) else names) if n.strip()]
    dirs = 2 if node.attrs["direction"] == "bidirectional" else 1
    if names and names != DEFAULT_ACTS[node.op] * dirs:
        return f"activations {names} (only the defaults, {DEFAULT_ACTS[node.op]})"
    return True


def _constant(constants, names, i, what, op):
    value = constants.get(names[i]) if names[i] else None
    if names[i] and value is None:
        from mnn_core.errors import UnsupportedOpError

        raise UnsupportedOpError(f"arm {op} needs a constant {what} (packed once, at prepare)")
    return value


def _prepare(node, ins, outs, constants, ctx):
    op, attrs = node.op, node.attrs
    names = list(node.inputs) + [""] * (8 - len(node.inputs))
    at = {i: k for k, i in enumerate(i for i, n in enumerate(names) if n)}  # position among present inputs
    x = static_shape(ins[0])
    seq, batch = (x[1], x[0]) if attrs["layout"] else (x[0], x[1])
    dirs, h, g = 2 if attrs["direction"] == "bidirectional" else 1, attrs["hidden_size"], GATES[op]
    w = _constant(constants, names, 1, "W", op)
    r = _constant(constants, names, 2, "R", op)
    b = _constant(constants, names, 3, "B", op)
    peep = _constant(constants, names, 7, "P", op) if op == "LSTM" else None
    b = np.zeros((dirs, 2 * g * h), np.float32) if b is None else np.asarray(b, np.float32)
    p = dict(
        cell=CELLS[op],
        dirs=dirs,
        reverse=int(attrs["direction"] == "reverse"),
        layout=attrs["layout"],
        lbr=attrs.get("linear_before_reset", 0),
        input_forget=attrs.get("input_forget", 0),
        clip=float(attrs["clip"] or 0.0),
        seq=seq,
        batch=batch,
        input=x[2],
        hidden=h,
        gates=g,
        in_lens=at.get(4, -1),
        in_h0=at.get(5, -1),
        in_c0=at.get(6, -1) if op == "LSTM" else -1,
    )
    return _arm.rnn(
        f"arm.{op}",
        p,
        np.asarray(w, np.float32),
        np.asarray(r, np.float32),
        b,
        None if peep is None else np.asarray(peep, np.float32),
    )


for _op in GATES:
    kernel(_op, dtypes=("float32", "int32", "int64"), supports=_supports, efficiency=0.4)(_prepare)

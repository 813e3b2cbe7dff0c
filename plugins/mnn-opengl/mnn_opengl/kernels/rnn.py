"""RNN, GRU and LSTM (ONNX semantics: forward, reverse, bidirectional; sequence lengths; initial
states; peepholes; clip; GRU's linear_before_reset; LSTM's input_forget; both layouts): one
rnn_step.comp dispatch per time step (two for a GRU without linear_before_reset), every direction
and batch entry at once, the plan and step parameters the backend kit's (mnn_core.backend.kit.rnn).
The states live in the recorder's scratch words; step 0 reads the initial states and the last step
writes Y_h and Y_c, so no copies are needed."""

from __future__ import annotations

from mnn_core.backend.kit.rnn import DTYPES, rnn_op_plan, rnn_supports

from ..recorder import element
from . import register
from .loops import budgeted


def _at(ref) -> int:
    return element(ref) if ref is not None and ref.info.size else -1


def _step_passes(node, ins) -> int:
    # rnn_step.comp loops over the input size, then over the hidden size (W is D x gates*H x I)
    w, r = ins[1].shape, ins[2].shape
    return w[-1] + r[-1] + 16


def _record(op, rec):
    planned = rnn_op_plan(op)
    if planned is None:
        return
    p, ins, outs = planned
    state = rec.scratch(p.state_floats)
    y = outs[0]
    has_y = y is not None and y.info.size > 0
    user = (p.B * p.H, p.H) if p.layout == 0 else (p.H, p.D * p.H)  # (direction, batch) strides of h0/c0/Y_h/Y_c
    tail = [
        state,
        *(_at(ins[i]) for i in (0, 1, 2, 3, 4, 7)),
        _at(y),
        _at(ins[5]),
        _at(ins[6]),
        _at(outs[1]),
        _at(outs[2]),
        *user,
    ]
    reads = [r for r in ins if r is not None]
    writes = [o for o in outs if o is not None and o.info.size]
    for t in range(p.T):
        for phase in p.phases:
            rec.elementwise("rnn_step", [*p.step_params(phase, t, has_y), *tail], reads, writes, p.dbh, barrier=True)


for _op in ("RNN", "GRU", "LSTM"):
    register(_op, _record, budgeted(rnn_supports, _step_passes), dtypes=DTYPES, efficiency=0.1)

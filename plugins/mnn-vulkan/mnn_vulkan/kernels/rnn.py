"""RNN, GRU and LSTM (ONNX semantics: forward, reverse, bidirectional; sequence lengths; initial
states; peepholes; clip; GRU's linear_before_reset; LSTM's input_forget; both layouts): one
rnn_step.comp dispatch per time step (two for a GRU without linear_before_reset), every direction
and batch entry at once. The states live in the segment's scratch (see mnn_core.backend.kit.rnn); copies
fill them from the initial states and hand the last ones to Y_h / Y_c."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import SCRATCH, Binding, record_copy
from mnn_core.backend.kit.rnn import DTYPES, rnn_op_plan, rnn_supports

from . import register
from .loops import budgeted


def _step_passes(node, ins) -> int:
    # rnn_step.comp loops over the input size, then over the hidden size (W is D x gates*H x I)
    return ins[1].shape[-1] + ins[2].shape[-1] + 16


def _record(op, rec):
    planned = rnn_op_plan(op)
    if planned is None:
        return
    p, ins, outs = planned
    state = Binding(SCRATCH, 0, p.state_floats * 4, written=True)
    rec.scratch(state.nbytes, written=True)
    zero = rec.constant(np.zeros(1, np.float32))
    record_copy(rec, zero, state, [p.state_floats], [0], [1])
    for idx, region in ((5, 0), (6, 2)):  # initial_h into h[0], initial_c into c
        if ins[idx] is not None and ins[idx].info.size:
            record_copy(rec, rec.tensor(ins[idx]), state, *p.state_copy(), dst_off=region * p.dbh)
    w = rec.tensor(ins[1])
    bind = [rec.tensor(ins[0]), w, rec.tensor(ins[2])]
    bind += [rec.tensor(ins[i]) if ins[i] is not None else w for i in (3, 4, 7)]
    y = outs[0]
    y_bind = rec.output(y) if y is not None and y.info.size else Binding(SCRATCH, 0, state.nbytes)
    has_y = y is not None and y.info.size > 0
    for t in range(p.T):
        for phase in p.phases:
            push = pack(*p.step_params(phase, t, has_y))
            rec.elementwise("rnn_step", bind + [state, y_bind], push, p.dbh)
    last = Binding(SCRATCH, 0, state.nbytes)
    for out, region in ((outs[1], p.T % 2), (outs[2], 2)):  # Y_h, Y_c
        if out is not None and out.info.size:
            shape, src, dst = p.state_copy(back=True)
            record_copy(rec, last, rec.output(out), shape, src, dst, src_off=region * p.dbh)


for _op in ("RNN", "GRU", "LSTM"):
    register(_op, _record, budgeted(rnn_supports, _step_passes), dtypes=DTYPES, efficiency=0.1)

"""RNN, GRU and LSTM (ONNX semantics: every direction, sequence lengths, initial states, peepholes, clip,
linear_before_reset, input_forget, both layouts): one rnn_step launch per time step (kernels/rnn.cl), two
for a GRU without linear_before_reset; the states in a private buffer laid out as mnn_core.backend.kit.rnn says,
filled from the initial states before the first step and copied to Y_h / Y_c after the last."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.rnn import DTYPES, rnn_plan, rnn_supports

from ._common import T, int8, kernel


def _copy(b, src, dst, shape, ss, ds):
    n = int(np.prod(shape))
    b.launch("copy_strided", [src, dst, n, len(shape), int8(shape), int8(ss), int8(ds)], (n,), tunable=False)


def _build_rnn(op, b):
    ins = list(op.inputs) + [None] * (8 - len(op.inputs))
    outs = list(op.outputs) + [None] * (3 - len(op.outputs))
    p = rnn_plan(op.node.op, [None if r is None else r.info for r in ins], op.node.attrs)
    if p.T == 0 or p.dbh == 0:
        return
    state = b.scratch(p.state_floats * 4)
    _copy(b, b.upload(np.zeros(1, np.float32)), state, [p.state_floats], [0], [1])
    for idx, region in ((5, 0), (6, 2)):  # initial_h into h[0], initial_c into c
        if ins[idx] is not None and ins[idx].info.size:
            _copy(b, b.tensor(ins[idx]), T(state.buffer, region * p.dbh), *p.state_copy())
    w = b.tensor(ins[1])
    lens = T(b.arena.buffer, ins[4].offset // 4) if ins[4] is not None else w  # read as 32-bit words
    args = [
        b.tensor(ins[0]),
        w,
        b.tensor(ins[2]),
        b.tensor(ins[3]) if ins[3] is not None else w,
        lens,
        b.tensor(ins[7]) if ins[7] is not None else w,
        state,
    ]
    y = outs[0]
    has_y = y is not None and y.info.size > 0
    args.append(b.tensor(y) if has_y else state)
    for t in range(p.T):
        for phase in p.phases:
            b.launch(
                "rnn_step",
                args + list(p.step_params(phase, t, has_y)),
                (p.dbh,),
                tunable=False,
            )
    for out, region in ((outs[1], p.T % 2), (outs[2], 2)):  # Y_h, Y_c
        if out is not None and out.info.size:
            shape, src, dst = p.state_copy(back=True)
            _copy(b, T(state.buffer, region * p.dbh), b.tensor(out), shape, src, dst)


for _op in ("RNN", "GRU", "LSTM"):
    kernel(_op, dtypes=DTYPES, supports=rnn_supports)(_build_rnn)

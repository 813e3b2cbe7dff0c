"""The integer ops of dynamically quantized models: QuantizeLinear (quantize.comp, which also writes
logic.py's casts to 8 bits), ConvInteger (conv_int.comp), MatMulInteger (matmul_int.comp) and ONNX
Runtime's DynamicQuantizeLSTM: one dq_range + dq_lstm_x pair for every step's input projection, then
per step a dq_range (the state's uint8 parameters) and a dq_lstm_step. What they decline and their
parameters are mnn_core.backend.kit.quant's, shared with mnn-opencl."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit import quant
from mnn_core.backend.kit.params import pack
from mnn_core.backend.kit.recorder import SCRATCH, Binding, record_copy

from . import register
from .loops import budgeted


def _record_quantize(op, rec):
    ins, infos = quant.padded_inputs(op, 3)
    p = quant.quantize_params(infos, quant.full_attrs(op.node))
    x, y = ins[0], op.outputs[0]
    zp = rec.tensor(ins[2]) if ins[2] is not None else rec.tensor(x)
    push = pack(y.info.size, 0, 0, p["signed"], p["inner"], p["channels"], p["has_zp"])
    rec.elementwise("quantize", [rec.tensor(x), rec.tensor(ins[1]), zp, rec.output(y)], push, -(-y.info.size // 4))


def record_cast_to_bytes(op, rec) -> None:
    """A Cast of float32 (truncated) or int32 to int8 / uint8: the low byte, as C converts."""
    x, y = op.inputs[0], op.outputs[0]
    push = pack(y.info.size, 1, int(x.info.dtype == "int32"), 0, 1, 1, 0)
    src = rec.tensor(x)
    rec.elementwise("quantize", [src, src, src, rec.output(y)], push, -(-y.info.size // 4))


def _record_conv_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    y = op.outputs[0]
    params = quant.conv_int_params(infos, quant.full_attrs(op.node))
    x, w = rec.tensor(ins[0]), rec.tensor(ins[1])
    bind = [x, w, rec.tensor(ins[2]) if ins[2] else x, rec.tensor(ins[3]) if ins[3] else w, rec.output(y)]
    rec.elementwise("conv_int", bind, pack(y.info.size, *params), y.info.size)


def _record_matmul_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    y = op.outputs[0]
    a, b = rec.tensor(ins[0]), rec.tensor(ins[1])
    bind = [a, b, rec.tensor(ins[2]) if ins[2] else a, rec.tensor(ins[3]) if ins[3] else b, rec.output(y)]
    rec.elementwise("matmul_int", bind, pack(y.info.size, *quant.matmul_int_params(infos)), y.info.size)


def _record_dq_lstm(op, rec):
    planned = quant.dq_lstm_plan(op)
    if planned is None:
        return
    ins, outs, p = planned
    rec.scratch(p.scratch_bytes, written=True)
    params_w = Binding(SCRATCH, p.params_at, p.params_bytes, written=True)
    params = Binding(SCRATCH, p.params_at, p.params_bytes)
    state = Binding(SCRATCH, p.state_at, p.state_bytes, written=True)
    record_copy(rec, rec.constant(np.zeros(1, np.float32)), state, [3 * p.dbh], [0], [1])
    for idx, slot in ((5, 0), (6, 2)):  # initial h into slot 0, initial c
        if ins[idx] is not None and ins[idx].info.size:
            record_copy(rec, rec.tensor(ins[idx]), state, [p.dbh], [1], [1], dst_off=slot * p.dbh)
    x, w, r = (rec.tensor(ins[i]) for i in range(3))
    rec.dispatch("dq_range", [x, params_w], pack(0, 0, p.T * p.B * p.I, 0), (1, 1, 1))
    wz = rec.tensor(ins[9]) if ins[9] is not None else w
    gx_w = Binding(SCRATCH, p.gx_at, p.gx_bytes, written=True)
    push = p.x_push()
    rec.elementwise("dq_lstm_x", [x, w, rec.tensor(ins[8]), wz, params, gx_w], pack(*push), push[0])
    rz = rec.tensor(ins[11]) if ins[11] is not None else r
    bias = rec.tensor(ins[3]) if ins[3] is not None else r
    peep = rec.tensor(ins[7]) if ins[7] is not None else r
    y = rec.output(outs[0]) if p.has_y else state
    whole = Binding(SCRATCH, 0, p.scratch_bytes, written=True)
    for t in range(p.T):
        rec.dispatch("dq_range", [state, params_w], pack((t % 2) * p.dbh, p.B * p.H, p.B * p.H, 2), (p.D, 1, 1))
        bind = [whole, r, rec.tensor(ins[10]), rz, bias, peep, y]
        rec.elementwise("dq_lstm_step", bind, pack(*p.step_push(t)), p.dbh)
    last = Binding(SCRATCH, p.state_at, p.state_bytes)
    for out, slot in ((outs[1], p.T % 2), (outs[2], 2)):  # Y_h, Y_c
        if out is not None and out.info.size:
            record_copy(rec, last, rec.output(out), [p.dbh], [1], [1], src_off=slot * p.dbh)


CHECKS = {op: budgeted(*checks) for op, checks in quant.LOOPED.items()}
register("QuantizeLinear", _record_quantize, quant.quantize_supports, dtypes=quant.ANY, efficiency=0.5)
register("ConvInteger", _record_conv_int, CHECKS["ConvInteger"], dtypes=quant.BYTES, efficiency=0.2)
register("MatMulInteger", _record_matmul_int, CHECKS["MatMulInteger"], dtypes=quant.BYTES, efficiency=0.2)
register("DynamicQuantizeLSTM", _record_dq_lstm, CHECKS["DynamicQuantizeLSTM"], dtypes=quant.ANY, efficiency=0.1)

"""The integer ops of dynamically quantized models: QuantizeLinear (quantize.comp, which also writes
logic.py's casts to 8 bits), ConvInteger (conv_int.comp), MatMulInteger (matmul_int.comp), int8 or
uint8 data four to a word, exact int32 sums; and ONNX Runtime's DynamicQuantizeLSTM: a dq_range +
dq_lstm_x pair for every step's input projection, then per step a dq_range (the state's uint8
parameters) and a dq_lstm_step, the plan's scratch (parameters, projections, states) in the
recorder's scratch words. What they decline and their parameters are mnn_core.backend.kit.quant's,
shared with the other GPU backends."""

from __future__ import annotations

from mnn_core.backend.kit import quant

from ..recorder import element
from . import register
from .loops import budgeted


def _at(ref, fallback) -> int:
    return element(ref if ref is not None else fallback)


def _record_quantize(op, rec):
    ins, infos = quant.padded_inputs(op, 3)
    p = quant.quantize_params(infos, quant.full_attrs(op.node))
    x, y = ins[0], op.outputs[0]
    params = [y.info.size, 0, 0, p["signed"], p["inner"], p["channels"], p["has_zp"]]
    params += [element(x), element(ins[1]), _at(ins[2], x), element(y)]
    rec.elementwise("quantize", params, ins, [y], -(-y.info.size // 4))


def record_cast_to_bytes(op, rec) -> None:
    """A Cast of float32 (truncated) or int32 to int8 / uint8: the low byte, as C converts."""
    x, y = op.inputs[0], op.outputs[0]
    params = [y.info.size, 1, int(x.info.dtype == "int32"), 0, 1, 1, 0, element(x), element(x), element(x), element(y)]
    rec.elementwise("quantize", params, [x], [y], -(-y.info.size // 4))


def _record_conv_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    x, w, y = ins[0], ins[1], op.outputs[0]
    params = [y.info.size, *quant.conv_int_params(infos, quant.full_attrs(op.node))]
    params += [element(x), element(w), _at(ins[2], x), _at(ins[3], w), element(y)]
    rec.elementwise("conv_int", params, ins, [y], y.info.size)


def _record_matmul_int(op, rec):
    ins, infos = quant.padded_inputs(op, 4)
    a, b, y = ins[0], ins[1], op.outputs[0]
    params = [y.info.size, *quant.matmul_int_params(infos)]
    params += [element(a), element(b), _at(ins[2], a), _at(ins[3], b), element(y)]
    rec.elementwise("matmul_int", params, ins, [y], y.info.size)


def _record_dq_lstm(op, rec):
    planned = quant.dq_lstm_plan(op)
    if planned is None:
        return
    ins, outs, p = planned
    scratch = rec.scratch(p.scratch_bytes // 4)
    state = p.state_at // 4
    reads = [r for r in ins if r is not None]
    y = outs[0]
    writes = [o for o in outs if o is not None and o.info.size]

    def dispatch(shader, params, total, local=64, groups=None):
        if groups is None:
            rec.elementwise(shader, params, reads, writes, total, local, barrier=True)
        else:
            rec.dispatch(shader, params, reads, writes, groups, (local, 1), barrier=True)

    for idx, slot in ((None, 0), (None, 1), (None, 2), (5, 0), (6, 2)):  # zeros, then initial h and c
        src = ins[idx] if idx is not None else None
        if idx is None or (src is not None and src.info.size):
            dispatch(
                "scratch_copy",
                [p.dbh, 1, element(src) if src is not None else -1, scratch + state + slot * p.dbh],
                p.dbh,
            )
    dispatch("dq_range", [element(ins[0]), 0, p.T * p.B * p.I, 0, 0, scratch], 0, 256, (1, 1, 1))
    x_push = p.x_push()
    wz = ins[9] if ins[9] is not None else ins[1]
    dispatch(
        "dq_lstm_x",
        [*x_push, element(ins[0]), element(ins[1]), element(ins[8]), element(wz), scratch, p.gx_at // 4],
        x_push[0],
    )
    rz = ins[11] if ins[11] is not None else ins[2]
    extras = [element(ins[i]) if ins[i] is not None else element(ins[2]) for i in (3, 7)]
    tail = [element(ins[2]), element(ins[10]), element(rz), *extras, element(y) if p.has_y else -1, scratch]
    for t in range(p.T):
        dispatch("dq_range", [state + (t % 2) * p.dbh, p.B * p.H, p.B * p.H, 2, 1, scratch], 0, 256, (p.D, 1, 1))
        dispatch("dq_lstm_step", [*p.step_push(t), *tail], p.dbh)
    for out, slot in ((outs[1], p.T % 2), (outs[2], 2)):  # Y_h, Y_c
        if out is not None and out.info.size:
            dispatch("scratch_copy", [p.dbh, 0, element(out), scratch + state + slot * p.dbh], p.dbh)


CHECKS = {op: budgeted(*checks) for op, checks in quant.LOOPED.items()}
register("QuantizeLinear", _record_quantize, quant.quantize_supports, dtypes=quant.ANY, efficiency=0.5)
register("ConvInteger", _record_conv_int, CHECKS["ConvInteger"], dtypes=quant.BYTES, efficiency=0.2)
register("MatMulInteger", _record_matmul_int, CHECKS["MatMulInteger"], dtypes=quant.BYTES, efficiency=0.2)
register("DynamicQuantizeLSTM", _record_dq_lstm, CHECKS["DynamicQuantizeLSTM"], dtypes=quant.ANY, efficiency=0.1)

"""The integer ops of dynamically quantized models (kernels/quant.cl): QuantizeLinear (and, through
ops_layout's Cast, casts to 8 bits), ConvInteger, MatMulInteger and ONNX Runtime's DynamicQuantizeLSTM:
a dq_range + dq_lstm_x pair for every step's input projection, then per step a dq_range (the state's
uint8 parameters) and a dq_lstm_step, all on one private scratch buffer. What they decline and their
parameters are mnn_core.backend.kit.quant's, shared with mnn-vulkan."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit import quant

from ._common import T, int8, kernel

ANY = ("float32", "int32", "int64", "uint8", "int8")


def _bytes(b, ref) -> T:
    """A tensor as a byte pointer (int8 / uint8 tensors, or any tensor passed where a kernel ignores it)."""
    return T(b.arena.buffer, ref.offset)


@kernel("QuantizeLinear", dtypes=ANY, supports=quant.quantize_supports)
def _build_quantize(op, b):
    ins, infos = quant.padded_inputs(op, 3)
    p = quant.quantize_params(infos, quant.full_attrs(op.node))
    x, y = ins[0], op.outputs[0]
    zp = _bytes(b, ins[2] if ins[2] is not None else x)
    n = y.info.size
    args = [b.tensor(x), b.tensor(ins[1]), zp, b.tensor(y), n, 0, 0, p["signed"], p["inner"], p["channels"]]
    b.launch("quantize_bytes", args + [p["has_zp"]], (n,))


def build_cast_to_bytes(op, b) -> None:
    """A Cast of float32 (truncated) or int32 to int8 / uint8: the low byte, as C converts."""
    x, y = op.inputs[0], op.outputs[0]
    n = y.info.size
    src = T(b.arena.buffer, x.offset // 4)
    args = [src, src, _bytes(b, x), b.tensor(y), n, 1, int(x.info.dtype == "int32"), 0, 1, 1, 0]
    b.launch("quantize_bytes", args, (n,))


@kernel("ConvInteger", dtypes=quant.BYTES, supports=quant.conv_int_supports)
def _build_conv_int(op, b):
    ins, infos = quant.padded_inputs(op, 4)
    y = op.outputs[0]
    params = quant.conv_int_params(infos, quant.full_attrs(op.node))
    zx, zw = (_bytes(b, ins[i] if ins[i] is not None else ins[0]) for i in (2, 3))
    args = [b.tensor(ins[0]), b.tensor(ins[1]), zx, zw, b.tensor(y), y.info.size]
    b.launch("conv_int", args + params, (y.info.size,))


@kernel("MatMulInteger", dtypes=quant.BYTES, supports=quant.matmul_int_supports)
def _build_matmul_int(op, b):
    ins, infos = quant.padded_inputs(op, 4)
    y = op.outputs[0]
    za, zb = (_bytes(b, ins[i] if ins[i] is not None else ins[0]) for i in (2, 3))
    args = [b.tensor(ins[0]), b.tensor(ins[1]), za, zb, b.tensor(y), y.info.size]
    b.launch("matmul_int", args + quant.matmul_int_params(infos), (y.info.size,))


def _copy(b, src, dst, n, src_stride=1):
    b.launch("copy_strided", [src, dst, n, 1, int8([n]), int8([src_stride]), int8([1])], (n,), tunable=False)


@kernel("DynamicQuantizeLSTM", dtypes=ANY, supports=quant.dq_lstm_supports)
def _build_dq_lstm(op, b):
    planned = quant.dq_lstm_plan(op)
    if planned is None:
        return
    ins, outs, p = planned
    buf = b.scratch(p.scratch_bytes).buffer
    at = p.state_at // 4
    _copy(b, b.upload(np.zeros(1, np.float32)), T(buf, at), 3 * p.dbh, 0)
    for idx, slot in ((5, 0), (6, 2)):  # initial h into slot 0, initial c
        if ins[idx] is not None and ins[idx].info.size:
            _copy(b, b.tensor(ins[idx]), T(buf, at + slot * p.dbh), p.dbh)
    x = b.tensor(ins[0])
    b.launch("dq_range", [x, T(buf, 0), 0, 0, p.T * p.B * p.I, 0], (256,), (256,), tunable=False)
    push = p.x_push()
    wz = _bytes(b, ins[9] if ins[9] is not None else ins[1])
    args = [x, b.tensor(ins[1]), b.tensor(ins[8]), wz, T(buf, 0), T(buf, p.gx_at // 4)]
    b.launch("dq_lstm_x", args + push, (push[0],), tunable=False)
    rz = _bytes(b, ins[11] if ins[11] is not None else ins[2])
    bias = b.tensor(ins[3]) if ins[3] is not None else x
    peep = b.tensor(ins[7]) if ins[7] is not None else x
    y = b.tensor(outs[0]) if p.has_y else T(buf, 0)
    for t in range(p.T):
        range_args = [T(buf, at), T(buf, 0), (t % 2) * p.dbh, p.B * p.H, p.B * p.H, 2]
        b.launch("dq_range", range_args, (256 * p.D,), (256,), tunable=False)
        args = [T(buf, 0), b.tensor(ins[2]), b.tensor(ins[10]), rz, bias, peep, y]
        b.launch("dq_lstm_step", args + p.step_push(t), (p.dbh,), tunable=False)
    for out, slot in ((outs[1], p.T % 2), (outs[2], 2)):  # Y_h, Y_c
        if out is not None and out.info.size:
            _copy(b, T(buf, at + slot * p.dbh), b.tensor(out), p.dbh)

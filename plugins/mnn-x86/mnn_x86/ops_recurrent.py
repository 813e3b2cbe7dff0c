"""RNN, GRU and LSTM on x86 (_recurrent.pyx, csrc/recurrent/), with ONNX semantics (mnn_core/ops/rnn.py):
every direction, sequence_lens, initial states, peepholes, clip, input_forget, linear_before_reset,
both layouts and the activations the reference knows.

X·W^T of all steps and directions is one packed GEMM (an _x86 MatMul execution with W packed at
prepare); each step is then a GEMV over R^T and the gate math in C, a task per (direction, batch row).

DynamicQuantizeLSTM (ONNX Runtime's, mnn_core/ops/rnn_quant.py) is the same LSTM whose products are
quantized as ONNX Runtime quantizes them: X (all steps) and each step's h (a direction's rows) to uint8
over their range, exact integer products with W and R packed once as int8 panels on the integer family's
u8 x s8 tiles (csrc/recurrent/quant.c, csrc/integer/qgemm.h and the one-row qgemv.h for a step of batch 1),
a task per direction.
"""

from __future__ import annotations

import numpy as np

from mnn_core.ops.rnn import ACTIVATIONS, DEFAULT_ACTIVATIONS, GATES

from . import _recurrent, _x86
from ._common import kernel, static_shape

#: activation name -> the code csrc/recurrent/recurrent.h switches on (X86_RA_*)
ACT_CODES = {name: i for i, name in enumerate(ACTIVATIONS)}


def _activations(op: str, attrs: dict, dirs: int) -> list:
    """(code, alpha, beta) per direction and gate function, read as the reference reads them."""
    per_dir = len(DEFAULT_ACTIVATIONS[op])
    names = [n for n in attrs["activation_names"].split(",") if n] or DEFAULT_ACTIVATIONS[op] * dirs
    if len(names) == per_dir and dirs == 2:
        names = names * 2
    alphas, betas = list(attrs["activation_alpha"]), list(attrs["activation_beta"])
    acts = []
    for name in names:
        _, da, db = ACTIVATIONS[name]
        a = alphas.pop(0) if da is not None and alphas else da
        b = betas.pop(0) if db is not None and betas else db
        acts.append((ACT_CODES[name], float(a or 0.0), float(b or 0.0)))
    return [acts[d * per_dir : (d + 1) * per_dir] + [(0, 0.0, 0.0)] * (3 - per_dir) for d in range(dirs)]


def _supports(node, ins):
    if ins[0].dtype != "float32":
        return "float32 only"
    if len(static_shape(ins[0])) != 3:
        return "X must be 3-D"
    return True


def _prepare(node, ins, outs, constants, ctx, isa):
    op, attrs = node.op, node.attrs
    names = list(node.inputs) + [""] * (8 - len(node.inputs))
    at = {i: k for k, i in enumerate(i for i, n in enumerate(names) if n)}  # position among present inputs
    const = [constants.get(n) if n else None for n in names]
    runtime = [at[i] if names[i] and const[i] is None else -1 for i in range(8)]
    x = static_shape(ins[0])
    seq, batch = (x[1], x[0]) if attrs["layout"] else (x[0], x[1])
    dirs, h, g = 2 if attrs["direction"] == "bidirectional" else 1, attrs["hidden_size"], GATES[op]
    mm = dict(
        M=seq * batch,
        N=dirs * g * h,
        K=x[2],
        batch=1,
        a_rs=x[2],
        a_cs=1,
        b_rs=1,
        b_cs=x[2],
        bias_rs=0,
        bias_cs=0,
        alpha=1.0,
        beta=1.0,
        act=0,
        act_alpha=0.0,
        act_beta=0.0,
    )
    w = const[1].reshape(dirs * g * h, x[2]) if const[1] is not None else None
    proj = _x86.matmul(isa, ctx.threads, f"{node.name}.proj", mm, w, None, None, None, -1)
    p = dict(
        cell=op,
        gates=g,
        dirs=dirs,
        seq=seq,
        batch=batch,
        input=x[2],
        hidden=h,
        reverse=int(attrs["direction"] == "reverse"),
        layout=attrs["layout"],
        lbr=attrs.get("linear_before_reset", 0),
        input_forget=attrs.get("input_forget", 0),
        clip=float(attrs["clip"]),
        acts=_activations(op, attrs, dirs),
        in_w=runtime[1],
        in_r=runtime[2],
        in_b=runtime[3],
        in_p=runtime[7] if op == "LSTM" else -1,
        in_lens=at.get(4, -1),
        in_h0=at.get(5, -1),
        in_c0=at.get(6, -1) if op == "LSTM" else -1,
        packed=[i for i in (1, 2, 3, 7) if const[i] is not None],
    )
    return _recurrent.recurrent(
        isa, ctx.threads, f"x86.{op}", p, proj, const[2], const[3], const[7] if op == "LSTM" else None
    )


for _op in ("RNN", "GRU", "LSTM"):
    kernel(_op, dtypes=("float32", "int32", "int64"), supports=_supports, efficiency=0.4)(_prepare)


# -- DynamicQuantizeLSTM -----------------------------------------------------------------------------

_DQ_CONSTANT = (1, 2, 8, 9, 10, 11)  # W, R, their scales and zero points: packed at prepare


def _dq_supports(node, ins):
    if ins[0].dtype != "float32" or len(static_shape(ins[0])) != 3:
        return "float32 X of 3 dims"
    return True


def _dq_weights(w, scale, zero_point, dirs: int) -> dict:
    """W (or R) [dirs][K][G*H] for the u8 x s8 tiles (csrc/integer/qgemm.h): int8 (uint8 weights shifted by
    128, their zero point with them) in panels [dirs][panels][K4][NR][4], the column sums and zero points
    [dirs][panels * NR] int32, the scale per column [dirs][G*H] float32. One zero point per direction, as the
    reference (mnn_core/ops/rnn_quant.py) and ONNX Runtime take it."""
    w = np.asarray(w)
    dirs, k, n = w.shape
    nr, shift = _recurrent.QG_NR, 128 if w.dtype == np.uint8 else 0
    k4, panels = -(-k // 4), -(-n // nr)
    zp = np.zeros(dirs, np.int32) if zero_point is None else np.asarray(zero_point).reshape(dirs, -1)[:, 0]
    q = np.zeros((dirs, k4 * 4, panels * nr), np.int8)
    q[:, :k, :n] = (w.astype(np.int32) - shift).astype(np.int8)
    panel = q.reshape(dirs, k4, 4, panels, nr).transpose(0, 3, 1, 4, 2)
    zr = np.repeat(zp.astype(np.int32) - shift, panels * nr).reshape(dirs, panels * nr)
    scale = np.broadcast_to(np.asarray(scale, np.float32).reshape(dirs, -1), (dirs, n))
    return dict(
        p=np.ascontiguousarray(panel).view(np.uint8),
        sum=q.sum(axis=1, dtype=np.int32),
        z=np.ascontiguousarray(zr),
        scale=np.ascontiguousarray(scale),
    )


@kernel("DynamicQuantizeLSTM", dtypes=("float32", "int8", "uint8"), supports=_dq_supports, efficiency=0.3)
def prepare_dq_lstm(node, ins, outs, constants, ctx, isa):
    attrs = node.attrs
    names = list(node.inputs) + [""] * (12 - len(node.inputs))
    at = {i: k for k, i in enumerate(i for i, n in enumerate(names) if n)}
    missing = [names[i] for i in _DQ_CONSTANT if names[i] and names[i] not in constants]
    if missing:
        raise ValueError(
            f"x86 DynamicQuantizeLSTM needs constant weights, scales and zero points; {missing} are computed"
        )
    const = [constants.get(n) if n else None for n in names]
    seq, batch, size = static_shape(ins[0])
    dirs, h = 2 if attrs["direction"] == "bidirectional" else 1, attrs["hidden_size"]
    packed_w = _dq_weights(const[1], const[8], const[9], dirs)
    packed_r = _dq_weights(const[2], const[10], const[11], dirs)
    runtime = [at[i] if names[i] and const[i] is None else -1 for i in range(8)]
    p = dict(
        cell="LSTM",
        gates=4,
        dirs=dirs,
        seq=seq,
        batch=batch,
        input=size,
        hidden=h,
        reverse=int(attrs["direction"] == "reverse"),
        layout=0,
        lbr=0,
        input_forget=attrs["input_forget"],
        clip=float(attrs["clip"]),
        acts=_activations("LSTM", attrs, dirs),
        in_w=-1,
        in_r=-1,
        in_b=runtime[3],
        in_p=runtime[7],
        in_lens=-1,
        in_h0=at.get(5, -1),
        in_c0=at.get(6, -1),
        packed=[i for i in (1, 2, 3, 7) + _DQ_CONSTANT[2:] if const[i] is not None],
    )
    quant = {side + key: arr for side, packed in (("w", packed_w), ("r", packed_r)) for key, arr in packed.items()}
    return _recurrent.recurrent(isa, ctx.threads, "x86.DynamicQuantizeLSTM", p, None, None, const[3], const[7], quant)

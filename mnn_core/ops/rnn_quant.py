"""ONNX Runtime's dynamically quantized LSTM (com.microsoft DynamicQuantizeLSTM): int8 weights,
inputs and hidden states quantized to uint8 on the fly, as ONNX Runtime computes it."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import rand
from .schema import Attr, OpSchema, Sample, register


def _uint8_params(a: np.ndarray) -> tuple:
    """ONNX Runtime's dynamic uint8 quantization of a block: its range widened to hold 0, in float32."""
    lo, hi = np.float32(min(a.min(initial=0), 0)), np.float32(max(a.max(initial=0), 0))
    scale = np.float32(1) if lo == hi else np.float32((hi - lo) / np.float32(255))
    return scale, np.float32(np.clip(np.round(-lo / scale), 0, 255))


def _quantized_matmul(a: np.ndarray, q: np.ndarray, zero_point, scale: np.ndarray) -> np.ndarray:
    """a [M, K] (float32) quantized to uint8 over the whole block, times the integer weights q [K, N]:
    exact integer products (float64 holds them: |terms| <= 255 * 255), scaled once in float32."""
    s, z = _uint8_params(a)
    qa = np.clip(np.round(a / s) + z, 0, 255)
    acc = (qa - z).astype(np.float64) @ (q.astype(np.float64) - float(zero_point))
    return acc.astype(np.float32) * (s * scale).astype(np.float32)


def _dq_lstm_infer(ins, attrs):
    x, w, r = ins[0], ins[1], ins[2]
    dirs, h = (2 if attrs["direction"] == "bidirectional" else 1), attrs["hidden_size"]
    if len(x.shape) != 3 or w.shape != (dirs, x.shape[2], 4 * h) or r.shape != (dirs, h, 4 * h):
        raise GraphError(
            f"DynamicQuantizeLSTM: X {x.shape}, W {w.shape}, R {r.shape} do not match {dirs} "
            f"direction(s) and hidden_size {h} (want W [dirs, input, 4*hidden], R [dirs, hidden, "
            "4*hidden])"
        )
    if w.dtype not in ("int8", "uint8") or r.dtype not in ("int8", "uint8"):
        raise GraphError(f"DynamicQuantizeLSTM takes int8 or uint8 W and R, got {w.dtype} and {r.dtype}")
    if ins[4] is not None:
        raise GraphError("DynamicQuantizeLSTM: sequence_lens is not supported (every sequence runs its full length)")
    state = TensorInfo((dirs, x.shape[1], h), x.dtype)
    return [TensorInfo((x.shape[0], dirs, x.shape[1], h), x.dtype), state, state]


def _dq_lstm(ins, attrs):
    from .rnn import _activations, _clip

    x = np.asarray(ins[0], np.float32)
    seq, batch, _ = x.shape
    hsize, dirs = attrs["hidden_size"], 2 if attrs["direction"] == "bidirectional" else 1
    w, r = ins[1], ins[2]
    get = [ins[i] if i < len(ins) and ins[i] is not None else None for i in range(12)]
    bias = get[3] if get[3] is not None else np.zeros((dirs, 8 * hsize), np.float32)
    h0, c0 = (np.zeros((dirs, batch, hsize), np.float32) if s is None else s for s in get[5:7])
    peep = np.zeros((dirs, 3 * hsize)) if get[7] is None else get[7].astype(np.float64)
    acts = _activations("LSTM", attrs, dirs)
    y = np.zeros((seq, dirs, batch, hsize))
    yh, yc = np.zeros((dirs, batch, hsize)), np.zeros((dirs, batch, hsize))
    for d in range(dirs):
        (w_scale, w_zp), (r_scale, r_zp) = (_per_direction(get[i], get[i + 1], d, dirs) for i in (8, 10))
        reverse = attrs["direction"] == "reverse" or d == 1
        xs = x[::-1] if reverse else x
        # ONNX Runtime multiplies all steps' inputs at once (one quantization), then each step's state
        gx = _quantized_matmul(xs.reshape(seq * batch, -1), w[d], w_zp, w_scale).reshape(seq, batch, -1)
        b = (bias[d, : 4 * hsize] + bias[d, 4 * hsize :]).astype(np.float32)
        f, g, hact = acts[d]
        pi, po, pf = np.split(peep[d], 3)
        h, c = h0[d].astype(np.float32), c0[d].astype(np.float64)
        for t in range(seq):
            gates = (gx[t] + _quantized_matmul(h, r[d], r_zp, r_scale) + b).astype(np.float64)
            gi, go, gf, gc = np.split(gates, 4, axis=1)
            i = f(_clip(gi + pi * c, attrs["clip"]))
            fg = 1 - i if attrs["input_forget"] else f(_clip(gf + pf * c, attrs["clip"]))
            c = fg * c + i * g(_clip(gc, attrs["clip"]))
            h64 = f(_clip(go + po * c, attrs["clip"])) * hact(c)
            y[seq - 1 - t if reverse else t, d] = h64
            h = h64.astype(np.float32)
        yh[d], yc[d] = h, c
    return [y.astype(np.float32), yh.astype(np.float32), yc.astype(np.float32)]


def _per_direction(scale, zero_point, d: int, dirs: int) -> tuple:
    """(scale [1] or [columns], zero point) of direction d; like ONNX Runtime, one zero point per
    direction (per-column zero points must all be equal, and 0 for int8)."""
    scale = np.asarray(scale, np.float32).reshape(dirs, -1)[d]
    zp = 0 if zero_point is None else np.asarray(zero_point).reshape(dirs, -1)[d, 0]
    return scale, zp


def _dq_lstm_samples(rng):
    for seq, batch, inp, hid, direction, per_column, signed in [
        (4, 1, 3, 5, "forward", False, True),
        (3, 2, 4, 3, "bidirectional", True, True),
        (5, 1, 2, 4, "reverse", False, False),
        (2, 3, 5, 2, "bidirectional", False, False),
    ]:
        dirs = 2 if direction == "bidirectional" else 1
        qtype, (lo, hi) = (np.int8, (-128, 128)) if signed else (np.uint8, (0, 256))
        cols = 4 * hid if per_column else 1
        zp = np.zeros((dirs, cols), qtype) if signed else np.full((dirs, cols), rng.integers(100, 150), qtype)
        ins = [
            rand(rng, seq, batch, inp),
            rng.integers(lo, hi, (dirs, inp, 4 * hid)).astype(qtype),
            rng.integers(lo, hi, (dirs, hid, 4 * hid)).astype(qtype),
            rand(rng, dirs, 8 * hid),
            None,
            rand(rng, dirs, batch, hid),
            rand(rng, dirs, batch, hid),
            None,
        ]
        for _ in range(2):
            ins += [
                rng.uniform(0.002, 0.01, (dirs, cols) if per_column else (dirs,)).astype(np.float32),
                zp if per_column else zp[:, 0],
            ]
        yield Sample(
            ins,
            {"hidden_size": hid, "direction": direction},
            f"{direction} {'per column' if per_column else 'per direction'} {qtype.__name__}",
        )


register(
    OpSchema(
        "DynamicQuantizeLSTM",
        infer=_dq_lstm_infer,
        reference=_dq_lstm,
        n_inputs=(12, 12),
        n_outputs=3,
        attrs={
            "hidden_size": Attr("int"),
            "direction": Attr("str", "forward", ("forward", "reverse", "bidirectional")),
            "activation_names": Attr("str", "", doc="comma-separated, as LSTM's; empty: Sigmoid,Tanh,Tanh"),
            "activation_alpha": Attr("floats", []),
            "activation_beta": Attr("floats", []),
            "clip": Attr("float", 0.0, doc="0: no clipping"),
            "input_forget": Attr("int", 0, (0, 1)),
        },
        doc="ONNX Runtime's com.microsoft DynamicQuantizeLSTM: an LSTM (ONNX gate order i, o, f, c) with int8/uint8 "
        "W [dirs, input, 4*hidden] and R [dirs, hidden, 4*hidden], scales and zero points per direction or per "
        "column (inputs 8-11), whose inputs and hidden states are quantized to uint8 as ONNX Runtime does: all "
        "steps' X in one block, each step's state in one block. sequence_lens is not supported.",
        samples=_dq_lstm_samples,
        flops=lambda ins, outs, attrs: 8.0 * outs[0].size * (ins[1].shape[1] + attrs["hidden_size"]),
    )
)

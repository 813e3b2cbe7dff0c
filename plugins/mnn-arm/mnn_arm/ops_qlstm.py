"""DynamicQuantizeLSTM on Arm (csrc/qlstm.c): ONNX Runtime's LSTM on int8 / uint8 weights whose input and
hidden state are quantized to uint8 at run (mnn_core/ops/rnn_quant.py). W, R, their scales and zero points,
B and P are constant (packed at prepare for the int8 path's GEMM: sdot where the CPU has it); X and the
initial states arrive at run. The default activations (sigmoid, tanh, tanh) only."""

from __future__ import annotations

import numpy as np

from mnn_core.errors import UnsupportedOpError

from . import _arm, paths
from ._common import kernel, static_shape

#: inputs that must be constants: W, R, their scales and zero points, B, P
CONSTANT = {1: "W", 2: "R", 3: "B", 7: "P", 8: "W's scale", 9: "W's zero point", 10: "R's scale", 11: "R's zero point"}
DEFAULT_ACTS = ["sigmoid", "tanh", "tanh"]


def _supports(node, ins):
    if ins[0].dtype != "float32" or ins[0].shape is None or len(ins[0].shape) != 3:
        return "float32 X of 3 dims"
    names = [n.strip().lower() for n in node.attrs.get("activation_names", "").split(",") if n.strip()]
    dirs = 2 if node.attrs["direction"] == "bidirectional" else 1
    if names and names not in (DEFAULT_ACTS, DEFAULT_ACTS * dirs):
        return f"activations {names} (only the defaults, {DEFAULT_ACTS})"
    return True


def _weights(q, scale, zero_point, d: int, dirs: int) -> tuple:
    """(weights [K][4H], zero point, scale) of direction d; one zero point per direction, as the reference
    and ONNX Runtime take it."""
    zp = 0 if zero_point is None else int(np.asarray(zero_point).reshape(dirs, -1)[d, 0])
    return np.asarray(q)[d], zp, np.asarray(scale, np.float32).reshape(dirs, -1)[d]


@kernel("DynamicQuantizeLSTM", dtypes=("float32", "int8", "uint8"), supports=_supports, efficiency=0.3)
def prepare_dq_lstm(node, ins, outs, constants, ctx):
    attrs = node.attrs
    names = list(node.inputs) + [""] * (12 - len(node.inputs))
    missing = [what for i, what in CONSTANT.items() if names[i] and names[i] not in constants]
    if missing:
        raise UnsupportedOpError(f"arm DynamicQuantizeLSTM needs constant {', '.join(missing)} (packed at prepare)")
    if names[4]:
        raise UnsupportedOpError("arm DynamicQuantizeLSTM: sequence_lens is not supported (nor by the reference)")
    at = {i: k for k, i in enumerate(i for i, n in enumerate(names) if n)}  # position among present inputs
    const = [constants.get(n) if n else None for n in names]
    seq, batch, size = static_shape(ins[0])
    dirs, h = 2 if attrs["direction"] == "bidirectional" else 1, attrs["hidden_size"]
    b = np.zeros((dirs, 8 * h), np.float32) if const[3] is None else np.asarray(const[3], np.float32)
    p = dict(
        dirs=dirs,
        reverse=int(attrs["direction"] == "reverse"),
        input_forget=attrs["input_forget"],
        seq=seq,
        batch=batch,
        input=size,
        hidden=h,
        clip=float(attrs["clip"] or 0.0),
        in_h0=at.get(5, -1),
        in_c0=at.get(6, -1),
    )
    return _arm.qlstm(
        paths.int8_path(),
        "arm.DynamicQuantizeLSTM",
        p,
        [_weights(const[1], const[8], const[9], d, dirs) for d in range(dirs)],
        [_weights(const[2], const[10], const[11], d, dirs) for d in range(dirs)],
        [b[d, : 4 * h] + b[d, 4 * h :] for d in range(dirs)],
        None if const[7] is None else np.asarray(const[7], np.float32).reshape(dirs, 3 * h),
    )

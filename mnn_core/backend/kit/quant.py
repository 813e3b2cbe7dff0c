"""The integer ops of dynamically quantized models on a GPU (QuantizeLinear and casts to 8 bits,
ConvInteger, MatMulInteger, DynamicQuantizeLSTM): what their kernels decline and the parameters
they take (quantize.comp, conv_int.comp, matmul_int.comp, dq_*.comp; mnn-opencl's quant.cl).

int8 / uint8 tensors are bytes, four to a 32-bit word; a kernel writing them writes whole words.
Integer sums are exact in int32 (as ONNX Runtime's kernels keep them), scaled once in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .geometry import conv_geometry

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo
    from ..api import SegmentOp

BYTES = ("uint8", "int8")
ANY = ("float32", "int32", "int64", "uint8", "int8")  # QuantizeLinear's and DynamicQuantizeLSTM's inputs
Infos = Sequence["TensorInfo | None"]


def full_attrs(node: Node) -> dict:
    from ...ops import get_schema

    return get_schema(node.op).check_attrs(node.attrs, node.name)


def _arg(ins: Infos, i: int) -> TensorInfo | None:
    return ins[i] if len(ins) > i and ins[i] is not None else None


def _size(info: TensorInfo | None) -> int:
    return 0 if info is None else int(np.prod(info.shape, dtype=np.int64))


def padded_inputs(op: SegmentOp, n: int) -> tuple[list, list]:
    """A SegmentOp's first `n` inputs, None for those it lacks, and their TensorInfos (None alike):
    the operands of an op whose kernels take its optional inputs by position."""
    ins = list(op.inputs) + [None] * (n - len(op.inputs))
    return ins, [None if r is None else r.info for r in ins]


# -- QuantizeLinear and Cast to 8 bits ---------------------------------------------------------------


def quantize_dtype(ins: Infos, attrs: dict) -> str:
    zp = _arg(ins, 2)
    return zp.dtype if zp is not None else (attrs["output_dtype"] or "uint8")


def quantize_supports(node: Node, ins: Infos) -> str | bool:
    attrs = full_attrs(node)
    x, scale = ins[0], ins[1]
    if x.dtype != "float32" or scale.dtype != "float32":
        return f"float32 input and scale only, got {x.dtype} and {scale.dtype}"
    if quantize_dtype(ins, attrs) not in BYTES:
        return f"int8 / uint8 output only, not {quantize_dtype(ins, attrs)}"
    if attrs["block_size"]:
        return "blocked quantization (block_size > 0) is not supported"
    return True


def quantize_params(ins: Infos, attrs: dict) -> dict:
    """inner (elements per channel step), channels (1: per tensor), signed output, has a zero point."""
    x, scale = ins[0], ins[1]
    channels = _size(scale)
    inner = 1
    if channels > 1:
        axis = attrs["axis"] % len(x.shape)
        inner = int(np.prod(x.shape[axis + 1 :], dtype=np.int64))
    return dict(
        inner=inner,
        channels=max(channels, 1),
        signed=int(quantize_dtype(ins, attrs) == "int8"),
        has_zp=int(_arg(ins, 2) is not None),
    )


def cast_to_bytes(node: Node, ins: Infos) -> bool:
    """Whether a Cast writes 8-bit integers (from float32 or int32: quantize.comp's mode 1)."""
    return node.attrs.get("to") in BYTES and ins[0].dtype in ("float32", "int32")


# -- ConvInteger and MatMulInteger -------------------------------------------------------------------


def _byte_operands(op: str, ins: Infos) -> str | bool:
    for i, info in enumerate(ins):
        if info is not None and info.dtype not in BYTES:
            return f"{op} takes int8 / uint8 operands and zero points, input {i} is {info.dtype}"
    return True


def conv_int_supports(node: Node, ins: Infos) -> str | bool:
    ok = _byte_operands("ConvInteger", ins)
    if ok is not True:
        return ok
    if len(ins[0].shape) != 4:
        return f"2-D convolutions only, got input {ins[0].shape}"
    if _size(_arg(ins, 2)) > 1:
        return "a per-channel x_zero_point is not supported"
    if _size(_arg(ins, 3)) not in (0, 1, ins[1].shape[0]):
        return f"w_zero_point of {_size(_arg(ins, 3))} values for {ins[1].shape[0]} output channels"
    return True


def conv_int_params(ins: Infos, attrs: dict) -> list[int]:
    """conv_int's push values after `total`: flags, C, H, W, M, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G."""
    x, w = ins[0], ins[1]
    geo = conv_geometry(x.shape, w.shape, attrs)
    wz = _arg(ins, 3)
    flags = (
        (x.dtype == "int8")
        | (w.dtype == "int8") << 1
        | (_arg(ins, 2) is not None) << 2
        | (wz is not None) << 3
        | (_size(wz) > 1) << 4
    )
    n, c, h, wd = x.shape
    return [
        int(flags),
        c,
        h,
        wd,
        w.shape[0],
        *geo["out"][2:],
        *geo["kernel"],
        *geo["strides"],
        geo["pads"][0],
        geo["pads"][1],
        *geo["dilations"],
        geo["group"],
    ]


def matmul_int_supports(node: Node, ins: Infos) -> str | bool:
    ok = _byte_operands("MatMulInteger", ins)
    if ok is not True:
        return ok
    a, b = ins[0].shape, ins[1].shape
    if len(a) < 2 or len(b) < 2:
        return f"A and B of rank 2 or more only, got {a} and {b}"
    if len(b) > 2 and tuple(b[:-2]) != tuple(a[:-2]):
        return f"a batched B must have A's batch dims: A {a}, B {b}"
    if _size(_arg(ins, 2)) not in (0, 1, a[-2]) or _size(_arg(ins, 3)) not in (0, 1, b[-1]):
        return "zero points per tensor, per row of A or per column of B only"
    return True


def matmul_int_params(ins: Infos) -> list[int]:
    """matmul_int's push values after `total`: flags, M, K, N, B's batch stride."""
    a, b = ins[0], ins[1]
    az, bz = _arg(ins, 2), _arg(ins, 3)
    flags = (
        (a.dtype == "int8")
        | (b.dtype == "int8") << 1
        | (az is not None) << 2
        | (bz is not None) << 3
        | (_size(az) > 1) << 4
        | (_size(bz) > 1) << 5
    )
    m, k = a.shape[-2:]
    n = b.shape[-1]
    return [int(flags), int(m), int(k), int(n), int(k * n) if len(b.shape) > 2 else 0]


# -- DynamicQuantizeLSTM -----------------------------------------------------------------------------

DEFAULT_ACTS = ("", "Sigmoid,Tanh,Tanh", "Sigmoid,Tanh,Tanh,Sigmoid,Tanh,Tanh")


def dq_lstm_supports(node: Node, ins: Infos) -> str | bool:
    attrs = full_attrs(node)
    if attrs["activation_names"].replace(" ", "") not in DEFAULT_ACTS:
        return f"default activations only (Sigmoid, Tanh, Tanh), got {attrs['activation_names']}"
    if ins[0].dtype != "float32" or ins[1].dtype not in BYTES or ins[2].dtype not in BYTES:
        return f"float32 X and int8 / uint8 W and R only, got {ins[0].dtype}, {ins[1].dtype}, {ins[2].dtype}"
    return True


def _align(nbytes: int, to: int = 256) -> int:
    return -(-nbytes // to) * to


class DqLstmPlan:
    """Sizes, flags and the scratch layout (byte offsets) of one DynamicQuantizeLSTM: (scale, zero
    point) pairs for X and each direction's h, then the input projections gx [D, T, B, 4H], then the
    state: h in two slots and c, each [D, B, H]."""

    def __init__(self, ins: Infos, n_outputs_y: bool, attrs: dict) -> None:
        x, w, r = ins[0], ins[1], ins[2]
        self.has_y = bool(n_outputs_y)  # Y itself is written, not only Y_h / Y_c
        self.T, self.B, self.I = (int(v) for v in x.shape)
        self.D, self.H = int(w.shape[0]), int(attrs["hidden_size"])
        self.dirs_mode = ("forward", "reverse", "bidirectional").index(attrs["direction"])
        self.w_scale_cols, self.r_scale_cols = (_size(ins[i]) // self.D for i in (8, 10))
        self.w_zp_cols = max(_size(_arg(ins, 9)) // self.D, 1)
        self.r_zp_cols = max(_size(_arg(ins, 11)) // self.D, 1)
        self.w_flags = (w.dtype == "int8") | (_arg(ins, 9) is not None) << 1
        self.flags = (
            (_arg(ins, 3) is not None)
            | (_arg(ins, 7) is not None) << 1
            | n_outputs_y << 2
            | bool(attrs["input_forget"]) << 3
            | (r.dtype == "int8") << 4
            | (_arg(ins, 11) is not None) << 5
        )
        self.clip = float(attrs["clip"])
        self.dbh = self.D * self.B * self.H
        self.params_at, self.params_bytes = 0, 8 * (1 + self.D)
        self.gx_at = _align(self.params_bytes)
        self.gx_bytes = 4 * self.D * self.T * self.B * 4 * self.H
        self.state_at = self.gx_at + _align(self.gx_bytes)
        self.state_bytes = 12 * self.dbh
        self.scratch_bytes = self.state_at + self.state_bytes

    def x_push(self) -> list[int]:
        """dq_lstm_x's push values."""
        total = self.D * self.T * self.B * 4 * self.H
        return [total, self.T * self.B, self.I, 4 * self.H, self.w_flags, self.w_scale_cols, self.w_zp_cols]

    def step_push(self, t: int) -> list[int | float]:
        """dq_lstm_step's push values for step t."""
        return [
            self.dbh,
            self.T,
            t,
            self.B,
            self.H,
            self.D,
            t % 2,
            self.flags,
            self.dirs_mode,
            self.r_scale_cols,
            self.r_zp_cols,
            self.clip,
            self.gx_at // 4,
            self.state_at // 4,
        ]


def dq_lstm_plan(op: SegmentOp) -> tuple[list, list, DqLstmPlan] | None:
    """A DynamicQuantizeLSTM SegmentOp's 12 inputs and 3 outputs (None where absent) and its plan;
    None when there is nothing to compute (no steps, or no hidden units)."""
    ins, infos = padded_inputs(op, 12)
    outs = list(op.outputs) + [None] * (3 - len(op.outputs))
    has_y = outs[0] is not None and outs[0].info.size > 0
    plan = DqLstmPlan(infos, has_y, full_attrs(op.node))
    return None if plan.T == 0 or plan.dbh == 0 else (ins, outs, plan)


# -- loop passes (mnn_core.backend.kit.loops): one invocation's, in the GLSL kernels of these ops --


def conv_int_passes(node: Node, ins: Infos) -> int:
    """conv_int.comp: the group's channels x kernel rows x kernel columns in one invocation."""
    w = ins[1].shape
    kh, kw = (w[2], w[3]) if len(w) == 4 else (1, w[2])
    return w[1] * (kh * (kw + 2) + 3) + 16


def matmul_int_passes(node: Node, ins: Infos) -> int:
    """matmul_int.comp: one output's sum over K."""
    return ins[0].shape[-1] + 16


def dq_lstm_passes(node: Node, ins: Infos) -> int:
    """dq_lstm_x.comp loops over the input size, dq_lstm_step.comp over the hidden size, dq_range.comp
    over a step's inputs shared by its work group (counted as 64 invocations of its 256: a margin)."""
    x, r = ins[0].shape, ins[2].shape
    return max(x[-1], r[1]) + x[-1] * x[1] // 64 + 64


#: the ops whose loops follow the data: (supports, loop passes of one invocation), for a backend's
#: LoopBudget.budgeted
LOOPED = {
    "ConvInteger": (conv_int_supports, conv_int_passes),
    "MatMulInteger": (matmul_int_supports, matmul_int_passes),
    "DynamicQuantizeLSTM": (dq_lstm_supports, dq_lstm_passes),
}

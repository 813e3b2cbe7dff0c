"""The recurrent ops (ONNX RNN, GRU, LSTM) as the GPU backends' step kernels take them: sizes, the
strides of X and Y in either layout, the activation codes, the flag word, and the copies between
the user's state tensors ((D, B, H), or (B, D, H) under layout 1) and the kernels' state buffer:

    state = h[2][D][B][H] (double-buffered: every unit reads the old h), c[D][B][H], rh[D][B][H]

(rh: a GRU's r * h, which every unit needs before any finishes its step)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo
    from ..api import SegmentOp

KINDS = {"RNN": 0, "GRU": 1, "LSTM": 2}
#: the activations the step kernels compute (ONNX's parameter-free ones)
ACT_CODES = {"Sigmoid": 0, "Tanh": 1, "Relu": 2, "Softsign": 3, "Softplus": 4}
DEFAULTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
#: what a backend registers the ops with: float32, and int32/int64 sequence lengths (rnn_supports checks which)
DTYPES = ("float32", "int32", "int64")
#: flag bits, as the kernels read them
F_BIAS, F_LENS, F_LENS64, F_PEEP, F_LBR, F_INPUT_FORGET, F_Y = 1, 2, 4, 8, 16, 32, 64


def _attrs(op: str, attrs: dict) -> dict:
    from ...ops import get_schema

    return get_schema(op).check_attrs(attrs, op)


def _activations(op: str, attrs: dict, dirs: int) -> list[str] | str:
    """The per-direction activation names, or why the kernels cannot run them."""
    names = [n for n in attrs["activation_names"].split(",") if n] or DEFAULTS[op]
    per = len(DEFAULTS[op])
    if len(names) == per * dirs and dirs == 2:
        if names[:per] != names[per:]:
            return f"different activations per direction ({', '.join(names)})"
        names = names[:per]
    if len(names) != per:
        return f"{len(names)} activations for {per} per direction"
    odd = [n for n in names if n not in ACT_CODES]
    if odd:
        return f"activation {odd[0]} (the kernels compute {', '.join(ACT_CODES)})"
    return names


def rnn_supports(node: Node, ins: Sequence[TensorInfo | None]) -> bool | str:
    """A KernelSpec `supports`: True, or why a GPU step kernel declines the node."""
    attrs = _attrs(node.op, node.attrs)
    dirs = 2 if attrs["direction"] == "bidirectional" else 1
    acts = _activations(node.op, attrs, dirs)
    if isinstance(acts, str):
        return acts
    floats = [info.dtype for i, info in enumerate(ins) if info is not None and i != 4 and info.dtype != "float32"]
    if floats:
        return f"float32 only, got {floats[0]}"
    if len(ins) > 4 and ins[4] is not None and ins[4].dtype not in ("int32", "int64"):
        return f"sequence_lens of {ins[4].dtype} (int32 or int64 only)"
    return True


@dataclass(frozen=True)
class RnnPlan:
    op: str
    T: int
    B: int
    I: int  # noqa: E741  (ONNX's name: the input size)
    H: int
    D: int
    layout: int
    reverse: int
    clip: float
    acts: int  # f | g << 4 | h << 8
    lbr: int
    input_forget: int
    has: tuple  # (bias, sequence_lens, int64 lens, peepholes)

    @property
    def kind(self) -> int:
        return KINDS[self.op]

    @property
    def dbh(self) -> int:
        return self.D * self.B * self.H

    @property
    def state_floats(self) -> int:
        return 4 * self.dbh

    @property
    def phases(self) -> tuple:
        """The dispatches of a step: a GRU without linear_before_reset first computes r * h (phase 1)."""
        return (1, 2) if self.op == "GRU" and not self.lbr else (0,)

    @property
    def x_strides(self) -> tuple:
        """X's (step, batch) strides in elements."""
        return (self.B * self.I, self.I) if self.layout == 0 else (self.I, self.T * self.I)

    @property
    def y_strides(self) -> tuple:
        """Y's (step, direction, batch) strides in elements."""
        if self.layout == 0:
            return (self.D * self.B * self.H, self.B * self.H, self.H)
        return (self.D * self.H, self.H, self.T * self.D * self.H)

    def flags(self, has_y: bool) -> int:
        bias, lens, lens64, peep = self.has
        return (
            F_BIAS * bias
            | F_LENS * lens
            | F_LENS64 * lens64
            | F_PEEP * peep
            | F_LBR * self.lbr
            | F_INPUT_FORGET * self.input_forget
            | F_Y * has_y
        )

    def step_params(self, phase: int, t: int, has_y: bool) -> tuple:
        """The rnn_step kernel's parameters for one phase of step `t` (the state ping-pongs between
        regions t % 2 and the other), the same on every GPU API."""
        head = (self.kind, phase, t, self.T, t % 2, self.B, self.I, self.H, self.D, self.reverse, self.flags(has_y))
        return (*head, float(self.clip), self.acts, *self.x_strides, *self.y_strides)

    def state_copy(self, back: bool = False) -> tuple[list, list, list]:
        """(shape, src strides, dst strides) of a user state tensor into the state buffer's (D, B, H)
        order, or `back` out of it."""
        ours = [self.B * self.H, self.H, 1]
        theirs = ours if self.layout == 0 else [self.H, self.D * self.H, 1]
        shape = [self.D, self.B, self.H]
        return (shape, ours, theirs) if back else (shape, theirs, ours)


def rnn_op_plan(op: SegmentOp) -> tuple[RnnPlan, list, list] | None:
    """A recorded RNN/GRU/LSTM op's plan, its inputs padded to 8 and outputs to 3 with None; None
    where it has nothing to compute (no steps, or no state)."""
    p = rnn_plan(op.node.op, [None if r is None else r.info for r in op.inputs], op.node.attrs)
    if p.T == 0 or p.dbh == 0:
        return None
    return p, list(op.inputs) + [None] * (8 - len(op.inputs)), list(op.outputs) + [None] * (3 - len(op.outputs))


def rnn_plan(op: str, ins: list, attrs: dict) -> RnnPlan:
    """The plan of a node of `op` whose inputs have these TensorInfos (None where absent)."""
    attrs = _attrs(op, attrs)
    ins = list(ins) + [None] * (8 - len(ins))
    x = ins[0].shape
    T, B = (x[0], x[1]) if attrs["layout"] == 0 else (x[1], x[0])
    dirs = 2 if attrs["direction"] == "bidirectional" else 1
    names = _activations(op, attrs, dirs)
    if isinstance(names, str):
        raise ValueError(f"{op}: {names}")
    codes = [ACT_CODES[n] for n in names] + [0] * (3 - len(names))
    lens = ins[4]
    has = (
        int(ins[3] is not None),
        int(lens is not None),
        int(lens is not None and lens.dtype == "int64"),
        int(op == "LSTM" and ins[7] is not None),
    )
    return RnnPlan(
        op,
        int(T),
        int(B),
        int(x[2]),
        int(attrs["hidden_size"]),
        dirs,
        attrs["layout"],
        int(attrs["direction"] == "reverse"),
        float(attrs["clip"]),
        codes[0] | codes[1] << 4 | codes[2] << 8,
        int(attrs.get("linear_before_reset", 0)),
        int(attrs.get("input_forget", 0)),
        has,
    )

"""The codes the shared shader sources switch on (act.glsl, binary, reduce, pad),
and which ops can fold the activation that follows them into their own dispatch. act.glsl's codes up to
FUSABLE are abi.h's enum mnn_activation (activation.py; `activation_code` is re-exported here)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from .activation import activation_code

if TYPE_CHECKING:
    from ..api import SegmentOp

#: binary.comp's operations
BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "PRelu": 7}

#: op -> (code in act.glsl, attribute giving alpha, attribute giving beta); codes up to
#: FUSABLE are the activations a binary op or a GEMM can apply as it writes its result
UNARY = {
    "Relu": (1, None, None),
    "Clip": (2, "min", "max"),
    "LeakyRelu": (3, "alpha", None),
    "Sigmoid": (4, None, None),
    "Silu": (5, None, None),
    "Gelu": (6, None, None),
    "Tanh": (7, None, None),
    "HardSigmoid": (8, "alpha", "beta"),
    "HardSwish": (9, None, None),
    "Exp": (16, None, None),
    "Log": (17, None, None),
    "Sqrt": (18, None, None),
    "Neg": (19, None, None),
    "Abs": (20, None, None),
    "Reciprocal": (21, None, None),
    "Erf": (22, None, None),
    "Floor": (23, None, None),
    "Ceil": (24, None, None),
    "Sin": (25, None, None),
    "Cos": (26, None, None),
    "Softplus": (27, None, None),
    "Round": (29, None, None),
    "Sign": (30, None, None),
    "Softsign": (31, None, None),
    "Mish": (32, None, None),
    "Elu": (33, "alpha", None),
    "Celu": (34, "alpha", None),
    "Selu": (35, "alpha", "gamma"),
    "ThresholdedRelu": (36, "alpha", None),
    "Shrink": (37, "bias", "lambd"),
    "Tan": (38, None, None),
    "Sinh": (39, None, None),
    "Cosh": (40, None, None),
}
FUSABLE = 9

#: reduce.comp's modes (the global pools are reductions over the spatial dims)
REDUCE = {
    "ReduceSum": 0,
    "ReduceMean": 1,
    "ReduceMax": 2,
    "ReduceMin": 3,
    "ReduceProd": 4,
    "ReduceL2": 5,
    "GlobalAveragePool": 1,
    "GlobalMaxPool": 2,
}

#: the Reduce* ops by mode, with ReduceSumSquare (6), which the reduce shaders of some backends add
REDUCE_OPS = {op: code for op, code in REDUCE.items() if op.startswith("Reduce")} | {"ReduceSumSquare": 6}

#: pad.comp's modes
PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2, "wrap": 3}

__all__ = [
    "BINARY",
    "FUSABLE",
    "PAD_MODES",
    "REDUCE",
    "REDUCE_OPS",
    "UNARY",
    "activation_code",
    "fuse_activations",
    "fused_activation",
    "unary_code",
]


def unary_code(op: str, attrs: dict) -> tuple[int, float, float]:
    """A unary op as act.glsl's code and its two parameters (0.0 where it takes none)."""
    code, alpha, beta = UNARY[op]
    return code, _param(attrs, alpha), _param(attrs, beta)


def _param(attrs: Mapping, name: str | None) -> float:
    return 0.0 if name is None else float(attrs[name])


def fused_activation(op: SegmentOp, nxt: SegmentOp | None) -> tuple[int, float, float] | None:
    """(code, alpha, beta) when `nxt` (a SegmentOp, or None) is an activation applied in
    place to binary op `op`'s float result (the core aliases it only when it is the
    result's one reader), else None."""
    if op.node.op not in BINARY or nxt is None or nxt.node.op not in UNARY or op.inputs[0].info.dtype != "float32":
        return None
    src, dst = op.outputs[0], nxt.outputs[0]
    if UNARY[nxt.node.op][0] > FUSABLE or nxt.inputs[0].name != src.name or dst.offset != src.offset:
        return None
    if dst.info != src.info:
        return None
    return unary_code(nxt.node.op, nxt.node.attrs)


def fuse_activations(ops: Sequence[SegmentOp]) -> Iterator[tuple[SegmentOp, tuple[int, float, float] | None]]:
    """(op, fused activation or None) for the ops of a segment, in order, leaving out each
    activation that `fused_activation` folds into the binary op before it."""
    skip = False
    for op, nxt in zip(ops, list(ops[1:]) + [None]):
        if skip:  # the activation was fused into the op before it
            skip = False
            continue
        act = fused_activation(op, nxt)
        skip = act is not None
        yield op, act

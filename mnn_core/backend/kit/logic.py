"""The bool-result ops of a shader backend (comparisons, And/Or/Xor/Not, IsNaN/IsInf), Where and
Cast among float32, int32, int64 and bool: their codes as compare.comp, where.comp and cast.comp
number them (elements.glsl's element kinds), what those shaders take, and their registration.
Each plugin keeps its own record functions (its buffer layout); `register_logic` wires them up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import quant
from .shader_ops import binary_supports as broadcast_supports

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo

#: compare.comp's op codes (IsInf's are isinf_code's)
COMPARE = {
    "Equal": 0,
    "Less": 1,
    "Greater": 2,
    "LessOrEqual": 3,
    "GreaterOrEqual": 4,
    "And": 5,
    "Or": 6,
    "Xor": 7,
    "Not": 8,
    "IsNaN": 9,
}
#: element kinds as elements.glsl numbers them
KINDS = {"float32": 0, "int32": 1, "int64": 2, "bool": 3}
ANY = tuple(KINDS)
#: 32-bit words of one Where value
VALUE_WORDS = {"float32": 1, "int32": 1, "int64": 2}


def isinf_code(attrs: dict) -> int:
    """compare.comp's code of IsInf for its detect_positive / detect_negative attributes."""
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
    return {(1, 1): 12, (1, 0): 10, (0, 1): 11}.get((pos, neg), 13)


def compare_code(node: Node) -> int:
    return isinf_code(node.attrs) if node.op == "IsInf" else COMPARE[node.op]


def where_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    if ins[0].dtype != "bool" or ins[1].dtype not in VALUE_WORDS:
        return f"a bool condition and float32/int32/int64 values, got {ins[0].dtype} and {ins[1].dtype}"
    return broadcast_supports(node, ins)


def cast_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    to = node.attrs["to"]
    if to in KINDS and ins[0].dtype in KINDS or quant.cast_to_bytes(node, ins):
        return True
    return f"casts among float32, int32, int64 and bool, and of float32 / int32 to 8 bits, not {ins[0].dtype} to {to}"


def float_only(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    return True if ins[0].dtype == "float32" else f"float32 input only, got {ins[0].dtype}"


def register_logic(register: Callable, record_compare: Callable, record_where: Callable, record_cast: Callable) -> None:
    """Register every op of this module with a GpuKernelTable's `register` and the plugin's records."""
    for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
        register(op, record_compare, broadcast_supports, dtypes=ANY, efficiency=0.8)
    for op in ("And", "Or", "Xor"):
        register(op, record_compare, broadcast_supports, dtypes=("bool",), efficiency=0.8)
    register("Not", record_compare, dtypes=("bool",), efficiency=0.8)
    register("IsNaN", record_compare, float_only, efficiency=0.8)
    register("IsInf", record_compare, float_only, efficiency=0.8)
    register("Where", record_where, where_supports, dtypes=ANY, efficiency=0.8)
    register("Cast", record_cast, cast_supports, dtypes=ANY + quant.BYTES, efficiency=0.8)

"""What the ONNX importer and exporter share: dtype codes, attribute values, errors.

Nothing here imports onnx at module import time: onnx is an optional extra.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GraphError, MnnError

#: ONNX TensorProto.DataType code -> numpy dtype name (the ones numpy can hold)
ONNX_TO_NUMPY = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "object",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
}
NUMPY_TO_ONNX = {v: k for k, v in ONNX_TO_NUMPY.items()}
#: names of the codes numpy cannot hold, for error messages
ONNX_TYPE_NAMES = {
    14: "complex64",
    15: "complex128",
    16: "bfloat16",
    17: "float8e4m3fn",
    18: "float8e4m3fnuz",
    19: "float8e5m2",
    20: "float8e5m2fnuz",
    21: "uint4",
    22: "int4",
    23: "float4e2m1",
    24: "float8e8m0",
    25: "uint2",
    26: "int2",
    0: "undefined",
}

DEFAULT_DOMAIN = "ai.onnx"


def onnx_type_name(code: int) -> str:
    """The numpy dtype name of an ONNX type code (ml_dtypes names, e.g. bfloat16, for the
    types numpy lacks), or a readable name when neither knows it."""
    if code in ONNX_TO_NUMPY:
        return ONNX_TO_NUMPY[code]
    try:
        from onnx import helper

        return helper.tensor_dtype_to_np_dtype(code).name
    except Exception:  # noqa: BLE001  an unknown or unsupported code
        return ONNX_TYPE_NAMES.get(code, f"type {code}")


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... where it is taken; the name returned is added to `taken`."""
    name, i = base, 1
    while name in taken:
        name = f"{base}_{i}"
        i += 1
    taken.add(name)
    return name


def numpy_to_onnx(dtype: str) -> int:
    """The ONNX type code of a numpy (or ml_dtypes) dtype name."""
    if dtype in NUMPY_TO_ONNX:
        return NUMPY_TO_ONNX[dtype]
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def require_onnx(what: str):
    """Import onnx, or explain how to get it."""
    try:
        import onnx
    except ImportError:
        raise MnnError(f"{what} needs the onnx package: pip install 'mnn-core[onnx]' (or pip install onnx)") from None
    return onnx


@dataclass(frozen=True)
class Unsupported:
    """One thing of an ONNX model mnn cannot take, with where it is."""

    op: str
    domain: str
    opset: int
    node: str
    reason: str
    #: graph inputs whose values, were they known, would remove this problem
    needs: tuple = ()

    def __str__(self) -> str:
        if not self.domain:  # a graph input, output or constant rather than a node
            return f"{self.op} {self.node!r}: {self.reason}"
        return f"{self.op} ({self.domain} opset {self.opset}), node {self.node!r}: {self.reason}"


class OnnxImportError(GraphError):
    """An ONNX model uses ops, types or dynamic inputs that mnn does not support.

    `unsupported` lists every problem found (not only the first); `needs_values`
    names the graph inputs whose *values* would make the model importable
    (inputs feeding a shape or another attribute mnn wants static).
    """

    def __init__(self, source: str, unsupported: list[Unsupported], needs_values: frozenset = frozenset()):
        self.source = source
        self.unsupported = list(unsupported)
        self.needs_values = frozenset(needs_values)
        ops = sorted({u.op for u in self.unsupported})
        lines = [f"{source}: {len(self.unsupported)} unsupported node(s), op types: {', '.join(ops)}"]
        shown = self.unsupported[:60]
        lines += [f"  - {u}" for u in shown]
        if len(self.unsupported) > len(shown):
            lines.append(f"  ... and {len(self.unsupported) - len(shown)} more")
        lines.append("mnn ops are listed by `mnnx backends`; an op can be added in mnn_core/ops/ (see docs)")
        super().__init__("\n".join(lines))


class NodeUnsupported(Exception):
    """Raised by an op handler: this node cannot be imported (reason in the message)."""

    def __init__(self, reason: str, needs: frozenset = frozenset()):
        super().__init__(reason)
        self.needs = needs


def attribute_value(attr):
    """An onnx AttributeProto as a plain Python value (numpy array for tensors)."""
    from onnx import AttributeProto, helper

    from .onnx_tensors import tensor_array  # (checked: dims, data; never external data from the working directory)

    if attr.type == AttributeProto.TENSOR:
        return tensor_array(attr.t)
    if attr.type == AttributeProto.TENSORS:
        return [tensor_array(t) for t in attr.tensors]
    if attr.type == AttributeProto.GRAPH:
        return attr.g
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if attr.type == AttributeProto.STRINGS:
        return [v.decode("utf-8", "replace") for v in value]
    if attr.type in (AttributeProto.INTS, AttributeProto.FLOATS):
        return list(value)
    return value


def as_int_list(arr: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(arr).reshape(-1)]

"""The checks load_mnn applies to a .mnn file's graph description (format.py): each JSON field of
the right type, sizes in range, attributes and tensors decoded without trusting the file. A failure
is a `_Bad`, which load_mnn turns into one MnnFormatError naming the file."""

from __future__ import annotations

import base64
import math
import reprlib
from typing import Any

import numpy as np

from .graph.ir import DTYPES, Node, TensorInfo, numpy_dtype

MAX_RANK = 8
MAX_ELEMENTS = 1 << 40  # per tensor; keeps every size computation far from int64 overflow
_INT64 = (-(1 << 63), (1 << 63) - 1)
_FLOAT_SPECIALS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_DAMAGED = "the file is damaged or was not written by mnn; export or copy it again"


class _Bad(Exception):
    """A problem found while reading; load_mnn adds the file name and turns it into MnnFormatError."""

    def __init__(self, problem: str, advice: str = _DAMAGED):
        super().__init__(f"{_clip(problem, 400)}; {advice}")  # hostile files hold huge names and numbers


_short = reprlib.Repr()
_short.maxstring = _short.maxother = 40
_short.maxlist = _short.maxdict = 4
_short.maxlevel = 2


def _clip(text: str, limit: int = 160) -> str:
    """A message fragment kept to one short line, whatever a hostile file put in it."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _le(dtype: str) -> np.dtype:
    return numpy_dtype(dtype).newbyteorder("<")  # the file is little-endian whatever the host


# -- checking the JSON ----------------------------------------------------------

_GRAPH_FIELDS = dict(name=str, weights=str, metadata=dict, inputs=dict, outputs=list, nodes=list, tensors=dict)
_NODE_FIELDS = dict(op=str, name=str, inputs=list, outputs=list, attrs=dict)
_TENSOR_FIELDS = dict(dtype=str, shape=list, storage=str, offset=int, nbytes=int, scales_offset=int, scales_nbytes=int)

_KINDS = {int: "an integer", str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def _fields(obj: Any, spec: dict[str, type], where: str, optional: frozenset = frozenset()) -> dict:
    """`obj` as a dict holding exactly the fields of `spec`, each of its type (json gives exact types)."""
    if type(obj) is not dict:
        raise _Bad(f"{where} must be an object, got {type(obj).__name__}")
    for key, kind in spec.items():
        if key not in obj and key not in optional:
            raise _Bad(f"{where} lacks the field {key!r}")
        if key in obj and kind is not object and type(obj[key]) is not kind:  # object: any type
            raise _Bad(f"field {where}.{key} must be {_KINDS[kind]}, got {type(obj[key]).__name__}")
    extra = set(obj) - set(spec)
    if extra:
        raise _Bad(f"{where} has unknown field(s) {_short.repr(sorted(extra))}")
    return obj


def _list_of(value: list, kind: type, where: str) -> list:
    for i, v in enumerate(value):
        if type(v) is not kind:
            raise _Bad(f"{where}[{i}] must be {_KINDS[kind]}, got {type(v).__name__}")
    return value


def _shape(value: list, where: str, symbolic: bool = False) -> tuple:
    if len(value) > MAX_RANK:
        raise _Bad(f"{where} has rank {len(value)}; .mnn allows at most {MAX_RANK}")
    for i, d in enumerate(value):
        if not ((type(d) is int and 0 <= d <= MAX_ELEMENTS) or symbolic and (d is None or type(d) is str and d)):
            want = "a size (non-negative integer) or a symbol" if symbolic else "a non-negative integer"
            raise _Bad(f"{where}[{i}] must be {want} up to 2**40, got {_short.repr(d)}")
    if math.prod(d if type(d) is int and d else 1 for d in value) > MAX_ELEMENTS:
        raise _Bad(f"{where} {value} has more than 2**40 elements")
    return tuple(value)


def _float(v: Any, where: str) -> float:
    if type(v) is str and v in _FLOAT_SPECIALS:
        return _FLOAT_SPECIALS[v]
    if type(v) is float or (type(v) is int and abs(v) < 2**1023):
        return float(v)
    raise _Bad(f"{where} must be a number or one of 'inf', '-inf', 'nan', got {_short.repr(v)}")


def _int64(v: Any, where: str) -> int:
    if type(v) is not int or not _INT64[0] <= v <= _INT64[1]:
        raise _Bad(f"{where} must be a 64-bit integer, got {_short.repr(v)}")
    return v


def _attr(value: Any, where: str) -> Any:
    kind = _fields(value, {"type": str, "value": object}, where).get("type")
    v = value["value"]
    if kind == "int":
        return _int64(v, f"{where}.value")
    if kind == "float":
        return _float(v, f"{where}.value")
    if kind in ("str", "bool"):
        if type(v) is not {"str": str, "bool": bool}[kind]:
            raise _Bad(f"field {where}.value must be {_KINDS[str if kind == 'str' else bool]}, got {type(v).__name__}")
        return v
    if kind in ("ints", "floats", "strs"):
        if type(v) is not list:
            raise _Bad(f"field {where}.value must be a list, got {type(v).__name__}")
        if kind == "strs":
            return list(_list_of(v, str, f"{where}.value"))
        convert = _int64 if kind == "ints" else _float
        return [convert(x, f"{where}.value[{i}]") for i, x in enumerate(v)]
    if kind == "tensor":
        return _tensor_attr(v, f"{where}.value")
    raise _Bad(f"{where}.type is {_short.repr(kind)}; expected int, float, str, bool, ints, floats, strs or tensor")


def _dtype(value: str, where: str) -> str:
    if value not in DTYPES:
        raise _Bad(f"{where} is {_short.repr(value)}; expected one of {', '.join(DTYPES)}")
    return value


def _tensor_attr(v: Any, where: str) -> np.ndarray:
    _fields(v, {"dtype": str, "shape": list, "data": str}, where)
    dtype = _dtype(v["dtype"], f"{where}.dtype")
    shape = _shape(v["shape"], f"{where}.shape")
    try:
        data = base64.b64decode(v["data"], validate=True)
    except ValueError:
        raise _Bad(f"{where}.data is not base64") from None
    expected = math.prod(shape) * np.dtype(dtype).itemsize
    if len(data) != expected:
        raise _Bad(f"{where}.data holds {len(data)} bytes, but {dtype}{list(shape)} needs {expected}")
    return _checked_bools(np.frombuffer(data, dtype=_le(dtype)).reshape(shape).copy(), where)


def _checked_bools(arr: np.ndarray, where: str) -> np.ndarray:
    if arr.dtype == np.bool_ and arr.size and arr.view(np.uint8).max() > 1:
        raise _Bad(f"{where} holds bool bytes other than 0 and 1")  # numpy would misbehave on them
    return arr


def _node(obj: Any, where: str) -> Node:
    _fields(obj, _NODE_FIELDS, where)
    attrs = {k: _attr(v, f"{where}.attrs.{k}") for k, v in obj["attrs"].items()}
    return Node(
        obj["op"],
        list(_list_of(obj["inputs"], str, f"{where}.inputs")),
        list(_list_of(obj["outputs"], str, f"{where}.outputs")),
        attrs,
        obj["name"],
    )


def _named(name: str, where: str) -> str:
    if not name:
        raise _Bad(f"{where} has an empty name")  # "" marks an absent optional input
    return f"{where}[{_short.repr(name)}]"


def _input(name: str, obj: Any) -> TensorInfo:
    where = _named(name, "inputs")
    _fields(obj, {"shape": list, "dtype": str}, where)
    return TensorInfo(_shape(obj["shape"], f"{where}.shape", symbolic=True), _dtype(obj["dtype"], f"{where}.dtype"))

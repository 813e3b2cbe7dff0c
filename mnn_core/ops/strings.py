"""String tensors with ONNX semantics: StringConcat, StringSplit, StringNormalizer, RegexFullMatch,
and the ai.onnx.ml LabelEncoder.

A string tensor is a numpy array of dtype object holding Python str. Such values cannot live
in an arena, so these ops are `dynamic` and a graph with strings runs eagerly (see ir.HOST_DTYPES).
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import broadcast_shape
from .schema import Attr, OpSchema, Sample, register

STRING = "object"


def _strings(rng, *shape) -> np.ndarray:
    words = np.array(["mnn", "Onnx", "", "a b", "Zürich", "x,y,,z", "  pad "], dtype=object)
    return words[rng.integers(0, len(words), shape)].astype(object)


def _need_strings(op: str, *infos) -> None:
    for info in infos:
        if info.dtype != STRING:
            raise GraphError(f"{op} takes string tensors, got {info.dtype}")


def _concat_infer(ins, attrs):
    _need_strings("StringConcat", *ins)
    return [TensorInfo(broadcast_shape(ins[0].shape, ins[1].shape), STRING)]


_join = np.frompyfunc(lambda a, b: str(a) + str(b), 2, 1)

register(
    OpSchema(
        "StringConcat",
        infer=_concat_infer,
        n_inputs=(2, 2),
        dynamic=True,
        reference=lambda ins, attrs: [np.asarray(_join(ins[0], ins[1]), dtype=object)],
        doc="Element-wise concatenation of two string tensors (broadcasting).",
        samples=lambda rng: iter([Sample([_strings(rng, 2, 3), _strings(rng, 3)])]),
    )
)


def _split_infer(ins, attrs):
    _need_strings("StringSplit", ins[0])
    return [TensorInfo(tuple(ins[0].shape) + ("StringSplit_tokens",), STRING), TensorInfo(ins[0].shape, "int64")]


def _split(ins, attrs):
    x = np.asarray(ins[0], dtype=object)
    sep = attrs["delimiter"] or None  # none or empty: runs of whitespace, as str.split()
    parts = [str(s).split(sep, attrs["maxsplit"]) if str(s) else [] for s in x.reshape(-1)]  # "": no tokens
    width = max((len(p) for p in parts), default=0)
    out = np.full((len(parts), width), "", dtype=object)
    for i, p in enumerate(parts):
        out[i, : len(p)] = p
    counts = np.array([len(p) for p in parts], np.int64)
    return [out.reshape(x.shape + (width,)), counts.reshape(x.shape)]


register(
    OpSchema(
        "StringSplit",
        infer=_split_infer,
        reference=_split,
        n_outputs=2,
        dynamic=True,
        attrs={
            "delimiter": Attr("str", "", doc="empty: split on runs of whitespace"),
            "maxsplit": Attr("int", -1, doc="-1: no limit"),
        },
        doc="Split each string: the tokens, padded with '' to the longest count on a new last axis, and the counts.",
        samples=lambda rng: iter(
            [Sample([_strings(rng, 2, 3)], {"delimiter": ","}), Sample([_strings(rng, 4)], {"maxsplit": 1})]
        ),
    )
)


def _normalizer_infer(ins, attrs):
    x = ins[0]
    _need_strings("StringNormalizer", x)
    if len(x.shape) not in (1, 2) or len(x.shape) == 2 and x.shape[0] != 1:
        raise GraphError(f"StringNormalizer takes [C] or [1, C] input, got {x}")
    return [TensorInfo(tuple(x.shape[:-1]) + ("StringNormalizer_kept",), STRING)]


def _normalize(ins, attrs):
    x = np.asarray(ins[0], dtype=object)
    stop = set(attrs["stopwords"])
    if not attrs["is_case_sensitive"]:
        stop = {w.lower() for w in stop}
        kept = [str(s) for s in x.reshape(-1) if str(s).lower() not in stop]
    else:
        kept = [str(s) for s in x.reshape(-1) if str(s) not in stop]
    change = attrs["case_change_action"]
    if change == "LOWER":
        kept = [s.lower() for s in kept]
    elif change == "UPPER":
        kept = [s.upper() for s in kept]
    out = np.array(kept or [""], dtype=object)  # everything removed: one empty string
    return [out.reshape(x.shape[:-1] + (len(out),))]


register(
    OpSchema(
        "StringNormalizer",
        infer=_normalizer_infer,
        reference=_normalize,
        dynamic=True,
        attrs={
            "case_change_action": Attr("str", "NONE", ("NONE", "LOWER", "UPPER")),
            "is_case_sensitive": Attr("int", 0, (0, 1), "how stopwords match"),
            "stopwords": Attr("strs", []),
            "locale": Attr("str", "", doc="accepted; case changes follow Unicode"),
        },
        doc="Remove stopwords, then change case; [C] or [1, C] in, the kept strings out ('' when none is kept).",
        samples=lambda rng: iter([Sample([_strings(rng, 5)], {"stopwords": ["mnn"], "case_change_action": "UPPER"})]),
    )
)


def _regex(ins, attrs):
    try:
        pattern = re.compile(attrs["pattern"])
    except re.error as exc:
        raise GraphError(
            f"RegexFullMatch: pattern {attrs['pattern']!r} is not a valid regular expression: {exc}"
        ) from None
    x = np.asarray(ins[0], dtype=object)
    return [np.array([pattern.fullmatch(str(s)) is not None for s in x.reshape(-1)], bool).reshape(x.shape)]


register(
    OpSchema(
        "RegexFullMatch",
        reference=_regex,
        dynamic=True,
        infer=lambda ins, attrs: _need_strings("RegexFullMatch", ins[0]) or [TensorInfo(ins[0].shape, "bool")],
        attrs={"pattern": Attr("str", "", doc="a regular expression (Python re syntax, which covers RE2's)")},
        doc="True where the whole string matches `pattern`.",
        samples=lambda rng: iter([Sample([_strings(rng, 3, 2)], {"pattern": r"[a-z]+"})]),
    )
)


# -- LabelEncoder (ai.onnx.ml) ----------------------------------------------------------------------------

_KEYS = ("keys_strings", "keys_int64s", "keys_floats", "keys_tensor")
_VALUES = ("values_strings", "values_int64s", "values_floats", "values_tensor")
_DEFAULTS = {
    "values_strings": "default_string",
    "values_int64s": "default_int64",
    "values_floats": "default_float",
    "values_tensor": "default_tensor",
}


def _given(attrs, names, what):
    present = [n for n in names if attrs[n] is not None and (not isinstance(attrs[n], list) or attrs[n])]
    if len(present) != 1:
        raise GraphError(f"LabelEncoder needs exactly one of {', '.join(names)} ({what}), got {present or 'none'}")
    return present[0]


def _values(attrs) -> tuple[np.ndarray, object]:
    name = _given(attrs, _VALUES, "values")
    if name == "values_tensor":
        values = np.asarray(attrs[name])
        default = attrs["default_tensor"]
        default = (
            np.asarray(default).reshape(-1)[0]
            if default is not None
            else {"O": "_Unused"}.get(values.dtype.kind, -1 if values.dtype.kind in "iu" else -0.0)
        )
        return values.reshape(-1), default
    dtype = {"values_strings": object, "values_int64s": np.int64, "values_floats": np.float32}[name]
    return np.array(attrs[name], dtype=dtype), attrs[_DEFAULTS[name]]


def _label_infer(ins, attrs):
    values, _ = _values(attrs)
    return [TensorInfo(ins[0].shape, values.dtype.name)]


def _label_encode(ins, attrs):
    key_name = _given(attrs, _KEYS, "keys")
    keys = np.asarray(attrs[key_name]).reshape(-1).tolist()
    values, default = _values(attrs)
    if len(keys) != len(values):
        raise GraphError(f"LabelEncoder: {len(keys)} keys but {len(values)} values")
    table = dict(zip(keys, values.tolist()))
    x = np.asarray(ins[0])
    out = np.array([table.get(k, default) for k in x.reshape(-1).tolist()], dtype=values.dtype)
    return [out.reshape(x.shape)]


register(
    OpSchema(
        "LabelEncoder",
        infer=_label_infer,
        reference=_label_encode,
        dynamic=True,
        attrs={
            **{
                k: Attr("strs" if k.endswith("strings") else "ints" if k.endswith("int64s") else "floats", [])
                for k in _KEYS[:3] + _VALUES[:3]
            },
            "keys_tensor": Attr("tensor", None),
            "values_tensor": Attr("tensor", None),
            "default_string": Attr("str", "_Unused"),
            "default_int64": Attr("int", -1),
            "default_float": Attr("float", -0.0),
            "default_tensor": Attr("tensor", None),
        },
        doc="Map each element through keys -> values (ai.onnx.ml); elements without a key get the default.",
        samples=lambda rng: iter(
            [
                Sample(
                    [_strings(rng, 2, 3)],
                    {"keys_strings": ["mnn", "Onnx"], "values_int64s": [1, 2], "default_int64": 0},
                )
            ]
        ),
    )
)

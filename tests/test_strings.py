"""String tensors (numpy object arrays): imported from ONNX, run eagerly, checked against values
worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import import_onnx  # noqa: E402
from mnn_core.errors import MnnFormatError  # noqa: E402


def vi(name, shape, dtype=T.STRING):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, opset=20, ml=False):
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("ai.onnx.ml", 4)] if ml else [])
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=opsets)


def run(m, feeds):
    graph = import_onnx(m)
    assert graph.is_dynamic()
    out = mnn.Session(graph).run(feeds)
    return [out[n] for n in graph.outputs]


def words(*items):
    return np.array(items, dtype=object)


def test_concat_broadcasts_and_keeps_utf8():
    m = model([helper.make_node("StringConcat", ["a", "b"], ["y"])], [vi("a", [3]), vi("b", [1])], [vi("y", [3])])
    (y,) = run(m, {"a": words("Zür", "", "x"), "b": words("ich")})
    assert y.dtype == object and y.tolist() == ["Zürich", "ich", "xich"]


@pytest.mark.parametrize(
    "attrs, want, counts",
    [
        ({"delimiter": ","}, [["a", "", "b"], ["c", "", ""]], [3, 1]),
        ({}, [["a,,b", "", ""], ["c", "d", "e"]], [1, 3]),
        ({"delimiter": ",", "maxsplit": 1}, [["a", ",b"], ["c", ""]], [2, 1]),
    ],
)
def test_split_pads_to_the_longest(attrs, want, counts):
    m = model(
        [helper.make_node("StringSplit", ["x"], ["y", "n"], **attrs)],
        [vi("x", [2])],
        [vi("y", None), vi("n", None, T.INT64)],
    )
    source = words("a,,b", "c d  e") if not attrs else words("a,,b", "c")
    y, n = run(m, {"x": source})
    assert y.tolist() == want and n.tolist() == counts


def test_normalizer_then_regex():
    nodes = [
        helper.make_node(
            "StringNormalizer", ["x"], ["norm"], case_change_action="LOWER", stopwords=["the", "A"], is_case_sensitive=0
        ),
        helper.make_node("RegexFullMatch", ["norm"], ["match"], pattern=r"[a-z]+\d?"),
    ]
    m = model(nodes, [vi("x", [6])], [vi("norm", None), vi("match", None, T.BOOL)])
    x = words("The", "Cat", "a", "sat2", "on", "MAT!")
    # (ONNX Runtime's StringNormalizer needs an installed en_US locale, which CI machines often lack)
    got = run(m, {"x": x})
    assert got[0].tolist() == ["cat", "sat2", "on", "mat!"]
    assert got[1].tolist() == [True, True, True, False]


def test_label_encoder_maps_strings_with_a_default():
    m = model(
        [
            helper.make_node(
                "LabelEncoder",
                ["x"],
                ["y"],
                domain="ai.onnx.ml",
                keys_strings=["a", "b"],
                values_int64s=[1, 2],
                default_int64=-7,
            )
        ],
        [vi("x", [4])],
        [vi("y", [4], T.INT64)],
        ml=True,
    )
    (y,) = run(m, {"x": words("b", "a", "zz", "b")})
    assert y.dtype == np.int64 and y.tolist() == [2, 1, -7, 2]


def test_equal_on_strings_and_a_string_graph_cannot_be_saved(tmp_path):
    m = model([helper.make_node("Equal", ["a", "b"], ["y"])], [vi("a", [2]), vi("b", [1])], [vi("y", [2], T.BOOL)])
    (y,) = run(m, {"a": words("x", "y"), "b": words("y")})
    assert y.tolist() == [False, True]
    const = model([helper.make_node("StringConcat", ["a", "k"], ["y"])], [vi("a", [1])], [vi("y", [1])])
    const.graph.initializer.append(helper.make_tensor("k", T.STRING, [1], [b"!"]))
    graph = import_onnx(const)
    with pytest.raises(MnnFormatError, match="dtype object"):
        mnn.save(graph, tmp_path / "s.mnn")

"""The classic-ML ops (ai.onnx.ml) of sklearn pipelines: Scaler (elementwise), Normalizer (a row per
invocation), LinearClassifier and TreeEnsembleClassifier (a row per invocation: scores, label and post
transform in one dispatch). Their constant tables ride in the dispatch's parameters, after the fixed
fields; what they decline and how the tables are laid out is mnn_core.backend.kit.ml's."""

from __future__ import annotations

from mnn_core.backend.kit import ml

from ..recorder import element
from . import register
from .loops import budgeted


def _record_scaler(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    table, count = ml.scaler_table(x.info, ml.full_attrs(op.node))
    params = [y.info.size, ml.scaler_width(x.info), count, element(x), element(y), table.view("uint32").tolist()]
    rec.elementwise("ml_scaler", params, [x], [y], y.info.size)


def _record_normalizer(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    n, f = ml.rows(x.info)
    params = [n, f, ml.NORMS[ml.full_attrs(op.node)["norm"]], element(x), element(y)]
    rec.elementwise("ml_normalizer", params, [x], [y], n)


def _record_linear(op, rec):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.linear_table(x.info, ml.full_attrs(op.node))
    head = [p["n"], p["f"], p["k"], p["how"], p["icpt"], p["labels"]]
    params = [*head, element(x), element(label), element(z), table.tolist()]
    rec.elementwise("ml_linear", params, [x], [label, z], p["n"])


def _record_trees(op, rec):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.trees_table(x.info, ml.full_attrs(op.node))
    params = [*(p[key] for key in ml.TREE_PARAMS), element(x), element(label), element(z), table.tolist()]
    rec.elementwise("ml_trees", params, [x], [label, z], p["n"])


CHECKS = {op: budgeted(*checks) for op, checks in ml.LOOPED.items()}
register("Scaler", _record_scaler, ml.scaler_supports, efficiency=0.5)
register("Normalizer", _record_normalizer, CHECKS["Normalizer"], efficiency=0.3)
register("LinearClassifier", _record_linear, CHECKS["LinearClassifier"], efficiency=0.3)
register("TreeEnsembleClassifier", _record_trees, CHECKS["TreeEnsembleClassifier"], efficiency=0.3)

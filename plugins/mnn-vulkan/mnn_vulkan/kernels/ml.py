"""The classic-ML ops (ai.onnx.ml) of sklearn pipelines: Scaler (elementwise), Normalizer (a row per
invocation), LinearClassifier and TreeEnsembleClassifier (a row per invocation: scores, label and post
transform in one dispatch). Their constants are one table uploaded with the segment; what they decline
and how the tables are laid out is mnn_core.backend.kit.ml's, shared with mnn-opencl."""

from __future__ import annotations

from mnn_core.backend.kit import ml
from mnn_core.backend.kit.params import pack

from . import register
from .loops import budgeted


def _record_scaler(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    table, count = ml.scaler_table(x.info, ml.full_attrs(op.node))
    push = pack(y.info.size, ml.scaler_width(x.info), count)
    rec.elementwise("ml_scaler", [rec.tensor(x), rec.constant(table), rec.output(y)], push, y.info.size)


def _record_normalizer(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    n, f = ml.rows(x.info)
    push = pack(n, f, ml.NORMS[ml.full_attrs(op.node)["norm"]])
    rec.elementwise("ml_normalizer", [rec.tensor(x), rec.output(y)], push, n, 64)


def _record_linear(op, rec):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.linear_table(x.info, ml.full_attrs(op.node))
    push = pack(p["n"], p["f"], p["k"], p["how"], p["icpt"], p["labels"])
    bind = [rec.tensor(x), rec.constant(table), rec.output(label), rec.output(z)]
    rec.elementwise("ml_linear", bind, push, p["n"], 64)


def _record_trees(op, rec):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.trees_table(x.info, ml.full_attrs(op.node))
    push = pack(*(p[key] for key in ml.TREE_PARAMS))
    bind = [rec.tensor(x), rec.constant(table), rec.output(label), rec.output(z)]
    rec.elementwise("ml_trees", bind, push, p["n"], 64)


CHECKS = {op: budgeted(*checks) for op, checks in ml.LOOPED.items()}
register("Scaler", _record_scaler, ml.scaler_supports, efficiency=0.5)
register("Normalizer", _record_normalizer, CHECKS["Normalizer"], efficiency=0.3)
register("LinearClassifier", _record_linear, CHECKS["LinearClassifier"], efficiency=0.3)
register("TreeEnsembleClassifier", _record_trees, CHECKS["TreeEnsembleClassifier"], efficiency=0.3)

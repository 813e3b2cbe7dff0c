"""The classic-ML ops (ai.onnx.ml) of sklearn pipelines (kernels/ml.cl): Scaler (elementwise),
Normalizer, LinearClassifier and TreeEnsembleClassifier (a row per work item: scores, first-best
label and post transform in one launch). Their tables and what they decline are
mnn_core.backend.kit.ml's, shared with mnn-vulkan."""

from __future__ import annotations

from mnn_core.backend.kit import ml

from ._common import kernel


@kernel("Scaler", supports=ml.scaler_supports)
def _build_scaler(op, b):
    x, y = op.inputs[0], op.outputs[0]
    table, count = ml.scaler_table(x.info, ml.full_attrs(op.node))
    args = [b.tensor(x), b.upload(table), b.tensor(y), y.info.size, ml.scaler_width(x.info), count]
    b.launch("ml_scaler", args, (y.info.size,))


@kernel("Normalizer", supports=ml.normalizer_supports)
def _build_normalizer(op, b):
    x, y = op.inputs[0], op.outputs[0]
    n, f = ml.rows(x.info)
    b.launch("ml_normalizer", [b.tensor(x), b.tensor(y), n, f, ml.NORMS[ml.full_attrs(op.node)["norm"]]], (n,))


@kernel("LinearClassifier", supports=ml.linear_supports)
def _build_linear(op, b):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.linear_table(x.info, ml.full_attrs(op.node))
    args = [b.tensor(x), b.upload(table), b.tensor(label), b.tensor(z)]
    b.launch("ml_linear", args + [p[key] for key in ("n", "f", "k", "how", "icpt", "labels")], (p["n"],))


@kernel("TreeEnsembleClassifier", supports=ml.trees_supports)
def _build_trees(op, b):
    x, (label, z) = op.inputs[0], op.outputs
    table, p = ml.trees_table(x.info, ml.full_attrs(op.node))
    args = [b.tensor(x), b.upload(table), b.tensor(label), b.tensor(z)]
    b.launch("ml_trees", args + [p[key] for key in ml.TREE_PARAMS], (p["n"],))

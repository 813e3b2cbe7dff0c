"""Importer handlers for classic ML (the ai.onnx.ml domain, as skl2onnx and onnxmltools write it)
and ONNX Runtime's DynamicQuantizeLSTM (com.microsoft, from onnxruntime's quantize_dynamic).

The ML ops map onto the mnn ops of mnn_core/ops/ml.py (attribute names follow ONNX; a tree's
hit rates, unused for inference, are dropped; opset 5's TreeEnsemble is rewritten as a
TreeEnsembleRegressor). String class labels are handled here: the
classifier gives label indices and a LabelEncoder turns them into the strings, so the classifier
itself stays a static op. ZipMap (a sequence of maps) has no mnn form and is refused with the way
out. DynamicQuantizeLSTM maps onto mnn's op of that name.

Registered by mnn_core/convert/__init__.py importing this module (the handler table is
onnx_ops.HANDLERS).
"""

from __future__ import annotations

import numpy as np

from .onnx_common import NodeUnsupported
from .onnx_ops import _ACTIVATION_CASE, HANDLERS, direct, handles

ML = "ai.onnx.ml"
CONTRIB = "com.microsoft"
#: attributes ONNX-ML trees carry that no inference reads
_UNUSED = ("nodes_hitrates", "nodes_hitrates_as_tensor")

for _op in ("Scaler", "Normalizer", "Imputer", "OneHotEncoder", "LinearRegressor"):
    HANDLERS[(ML, _op)] = direct


@handles("TreeEnsembleRegressor", domain=ML)
def _tree_regressor(ctx, node):
    direct(ctx, node, ignore=_UNUSED)


@handles("LinearClassifier", domain=ML)
def _linear_classifier(ctx, node):
    strings = node.attrs.pop("classlabels_strings", None)
    if not strings:
        return direct(ctx, node)
    node.attrs["classlabels_ints"] = list(range(len(strings)))
    _with_string_labels(ctx, node, list(strings), {})


@handles("TreeEnsembleClassifier", domain=ML)
def _tree_classifier(ctx, node):
    strings = node.attrs.pop("classlabels_strings", None)
    if not strings:
        return direct(ctx, node, ignore=_UNUSED)
    node.attrs["classlabels_int64s"] = list(range(len(strings)))
    _with_string_labels(ctx, node, list(strings), {"ignore": _UNUSED})


def _with_string_labels(ctx, node, labels: list[str], options: dict) -> None:
    """The classifier with label indices, then a LabelEncoder from the indices to the strings."""
    index = ctx.fresh(f"{node.outputs[0]}.index")
    classifier = type(node)(
        node.op, node.domain, node.opset, node.name, node.inputs, [index] + node.outputs[1:], node.attrs
    )
    direct(ctx, classifier, **options)
    ctx.emit(
        "LabelEncoder",
        [index],
        node.outputs[:1],
        {"keys_int64s": list(range(len(labels))), "values_strings": labels},
        f"{node.name}.labels",
    )


@handles("TreeEnsemble", domain=ML)
def _tree_ensemble(ctx, node):
    """ai.onnx.ml opset 5's TreeEnsemble as the TreeEnsembleRegressor it generalizes (as ONNX Runtime
    runs it): trees rewritten node by node from their roots, a BRANCH_MEMBER node as a chain of
    BRANCH_EQ nodes, one per member; the output cast back to the input's type. Two places where
    ONNX Runtime 1.32 departs from the spec follow the spec: post_transform 1 is SOFTMAX and 2
    LOGISTIC (ORT swaps them), and BRANCH_MEMBER tests the value itself (ORT truncates it to an
    integer first)."""
    a = node.attrs
    attrs = _regressor_trees(a)
    attrs.update(
        n_targets=int(a["n_targets"]),
        aggregate_function=_V5_AGGREGATES[a.get("aggregate_function", 1)],
        post_transform=_V5_TRANSFORMS[a.get("post_transform", 0)],
    )
    x, want = node.inputs[0], ctx.dtype(node.inputs[0])
    if want not in ("float32", "float64"):
        x = ctx.emit("Cast", [x], [ctx.fresh(f"{x}.float32")], {"to": "float32"})[0]
    y = node.outputs if want == "float32" else [ctx.fresh(f"{node.outputs[0]}.float32")]
    ctx.emit("TreeEnsembleRegressor", [x], y, attrs, node.name)
    if want != "float32":
        ctx.emit("Cast", y, node.outputs, {"to": want}, f"{node.name}.cast")


def _regressor_trees(a: dict) -> dict:
    """TreeEnsembleRegressor's node and target attributes for opset 5's trees (walked depth first
    from each root, leaves numbered with the nodes)."""
    modes = np.asarray(a["nodes_modes"]).reshape(-1).astype(int).tolist()
    splits = np.asarray(a["nodes_splits"], np.float64).reshape(-1)
    weights = np.asarray(a["leaf_weights"], np.float64).reshape(-1)
    members = _member_sets(np.asarray(a.get("membership_values", np.zeros(0)), np.float64).reshape(-1), modes)
    missing = list(a.get("nodes_missing_value_tracks_true", [])) + [0] * len(modes)
    true_ids, false_ids = a["nodes_truenodeids"], a["nodes_falsenodeids"]
    nodes, targets, values, votes = [], [], [], []  # (tree, id, feature, mode, true, false, missing), ...
    for tree, root in enumerate(a["tree_roots"]):
        single = true_ids[root] == false_ids[root] and a["nodes_trueleafs"][root]  # a tree that is a leaf
        stack, count = [(true_ids[root], True, 0, None) if single else (root, False, 0, None)], 0
        while stack:
            at, leaf, member, parent = stack.pop()
            new, count = count, count + 1
            if parent is not None:
                nodes[parent[0]][parent[1]] = new
            if leaf:
                nodes.append([tree, new, 0, "LEAF", 0, 0, 0])
                values.append(0.0)
                targets.append((tree, new, a["leaf_targetids"][at]))
                votes.append(weights[at])
                continue
            is_member = modes[at] == 6
            nodes.append(
                [
                    tree,
                    new,
                    a["nodes_featureids"][at],
                    "BRANCH_EQ" if is_member else _V5_MODES[modes[at]],
                    -1,
                    -1,
                    missing[at],
                ]
            )
            values.append(members[at][member] if is_member else splits[at])
            here = len(nodes) - 1
            if is_member and member + 1 < len(members[at]):  # the next member: the same node again
                stack.append((at, False, member + 1, (here, 5)))
            else:
                stack.append((false_ids[at], bool(a["nodes_falseleafs"][at]), 0, (here, 5)))
            stack.append((true_ids[at], bool(a["nodes_trueleafs"][at]), 0, (here, 4)))
    columns = list(zip(*nodes)) or [[]] * 7
    out = {
        f"nodes_{k}": list(c)
        for k, c in zip(
            ("treeids", "nodeids", "featureids", "modes", "truenodeids", "falsenodeids", "missing_value_tracks_true"),
            columns,
        )
    }
    out.update({f"target_{k}": list(c) for k, c in zip(("treeids", "nodeids", "ids"), list(zip(*targets)) or [[]] * 3)})
    out.update(nodes_values_as_tensor=np.asarray(values), target_weights_as_tensor=np.asarray(votes))
    return out


_V5_MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
_V5_AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
_V5_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def _member_sets(values, modes: list[int]) -> dict[int, list[float]]:
    """{node: its members} of the BRANCH_MEMBER nodes, whose sets membership_values lists in node
    order, each ended by a NaN."""
    sets, current = [], []
    for v in values.tolist():
        if np.isnan(v):
            sets.append(current)
            current = []
        else:
            current.append(v)
    if current:
        sets.append(current)
    member_nodes = [i for i, m in enumerate(modes) if m == 6]
    if len(sets) < len(member_nodes) or any(not s for s in sets[: len(member_nodes)]):
        raise NodeUnsupported(
            f"TreeEnsemble: {len(member_nodes)} BRANCH_MEMBER nodes, membership_values "
            f"gives {len(sets)} set(s) (each ended by NaN, none empty)"
        )
    return dict(zip(member_nodes, sets))


@handles("LabelEncoder", domain=ML)
def _label_encoder(ctx, node):
    if node.opset >= 2:
        return direct(ctx, node)
    # opset 1: classes_strings maps strings to their index, or indices to the strings
    classes = list(node.attrs.get("classes_strings", []))
    if ctx.dtype(node.inputs[0]) == "object":
        attrs = {
            "keys_strings": classes,
            "values_int64s": list(range(len(classes))),
            "default_int64": int(node.attrs.get("default_int64", -1)),
        }
    else:
        attrs = {
            "keys_int64s": list(range(len(classes))),
            "values_strings": classes,
            "default_string": node.attrs.get("default_string", "_Unused"),
        }
    ctx.emit("LabelEncoder", node.inputs, node.outputs, attrs, node.name)


@handles("ZipMap", domain=ML)
def _zipmap(ctx, node):
    raise NodeUnsupported(
        "ZipMap gives a sequence of maps ({label: probability} per row), and mnn has no map type. Convert the "
        "model with the probabilities as a tensor: skl2onnx.to_onnx(model, X, options={id(model): "
        "{'zipmap': False}}) (or options={'zipmap': False} for every classifier)"
    )


# -- ONNX Runtime's dynamically quantized LSTM -----------------------------------------------------


@handles("DynamicQuantizeLSTM", domain=CONTRIB)
def _dynamic_quantize_lstm(ctx, node):
    """mnn's DynamicQuantizeLSTM (mnn_core/ops/ml.py) takes the contrib op's inputs as they are: a
    float LSTM on dequantized weights misses ONNX Runtime's outputs by ~1e-2 (relative L2 4e-3 on
    ddddocr's LSTM), the error of quantizing the inputs, so the op quantizes them as ORT does."""
    if node.input(4):
        raise NodeUnsupported("DynamicQuantizeLSTM with sequence_lens is not supported")
    for i in (5, 6):  # zero initial states of a dynamic batch (ConstantOfShape) are the default
        if node.input(i) in ctx.fills and ctx.fills[node.input(i)] == 0:
            node.inputs[i] = ""
    values = {}
    if node.attrs.get("activations"):
        values["activation_names"] = ",".join(_ACTIVATION_CASE.get(a.lower(), a) for a in node.attrs["activations"])
    direct(ctx, node, values=values, ignore=("activations",))

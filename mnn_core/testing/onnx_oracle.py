"""An independent oracle for the reference kernels: each op as a small ONNX model run by ONNX Runtime or
by onnx's `ReferenceEvaluator` (test-only dependencies, imported on first use).

    outs = oracle_outputs("Conv", sample)      # list of arrays, or raises OracleSkip(reason)

The model is built from mnn's attributes, not by mnn's exporter, except for the few ops whose ONNX form
only the exporter writes (EXPORTED): what mnn passes as attributes (Reshape's shape, Slice's starts,
Pad's pads, ...) becomes the constant inputs ONNX wants, and a fused `activation` becomes a second node.
Ops ONNX Runtime does not run (newer opsets, the preview training domain, sequences) run on the
ReferenceEvaluator, an implementation in numpy written apart from mnn.
"""

from __future__ import annotations

import math

import numpy as np

from ..graph.ir import LOW_PRECISION_DTYPES, Graph
from ..ops import all_schemas
from .tolerance import tolerance

OPSET = 20  # Gelu is an ONNX op from 20 on
ML_OPSET = 3  # ai.onnx.ml: TreeEnsemble* v3 and LabelEncoder v2 take mnn's attribute names

#: op -> ONNX domain, where it is not the default one
DOMAIN = {
    **{
        op: "ai.onnx.ml"
        for op in (
            "ArrayFeatureExtractor",
            "Binarizer",
            "Imputer",
            "LabelEncoder",
            "LinearClassifier",
            "LinearRegressor",
            "Normalizer",
            "OneHotEncoder",
            "Scaler",
            "TreeEnsembleClassifier",
            "TreeEnsembleRegressor",
        )
    },
    **{op: "ai.onnx.preview.training" for op in ("Adam", "Adagrad", "Momentum")},
    **{op: "com.microsoft" for op in ("QLinearAdd", "DynamicQuantizeLSTM", "MatMulNBits")},
}

#: ops newer than OPSET or outside ONNX Runtime's build: run on onnx's ReferenceEvaluator at this opset
EVALUATOR_OPSET = {
    "BitCast": 26,
    "CumProd": 26,
    "LinearAttention": 27,
    "TensorScatter": 24,
    "Adam": OPSET,
    "Adagrad": OPSET,
    "Momentum": OPSET,
}

#: ops whose ONNX form (value inputs in a different order, bodies, sequences) is written by mnn's exporter;
#: the exporter's translation is then part of what is checked. Sequence results need the evaluator.
EXPORTED = frozenset(
    {
        "Col2Im",
        "DFT",
        "STFT",
        "If",
        "Loop",
        "Scan",
        "SequenceMap",
        "SliceDynamic",
        "ConcatFromSequence",
        "SequenceConstruct",
        "SplitToSequence",
        "SequenceAt",
        "SequenceEmpty",
        "SequenceErase",
        "SequenceInsert",
        "SequenceLength",
        "Optional",
        "OptionalHasElement",
        "OptionalGetElement",
    }
)
EXPORTED_ON_EVALUATOR = frozenset(
    {
        "SequenceConstruct",
        "SplitToSequence",
        "SequenceEmpty",
        "SequenceErase",
        "SequenceInsert",
        "Optional",
        "OptionalHasElement",
        "OptionalGetElement",
    }
)
#: onnx.reference computes these in float64 and returns float64 for float32 inputs: cast back
EVALUATOR_UPCASTS = frozenset({"Adam", "Adagrad", "Momentum"})

#: ops whose ONNX name differs (same semantics)
RENAME = {
    "Scatter": "ScatterElements",  # Scatter is deprecated since opset 11
    "MaxPoolWithIndices": "MaxPool",
}  # ONNX's MaxPool with its second (Indices) output


class OracleSkip(Exception):
    """This sample has no independent result (the reason says why and where it is checked instead)."""


# -- translating static attributes into ONNX inputs ------------------------------------------
# Each function takes (model, inputs, attrs, sample) and edits inputs / attrs in place.


class _Model:
    """Collects the nodes and constants of one small ONNX graph."""

    def __init__(self):
        self.nodes, self.initializers = [], []
        self.output_perms = {}  # output index -> Transpose perm applied after the op

    def const(self, value, dtype="int64") -> str:
        from onnx import numpy_helper

        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op, inputs, outputs, domain="", **attrs):
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, outputs, domain=domain or None, **attrs))


def _to_inputs(*names, dtype="int64", optional=()):
    """Move attributes `names` into trailing inputs (absent optional ones become "")."""

    def translate(m, inputs, attrs, sample):
        for name in names:
            value = attrs.pop(name, None)
            if value is None or (name in optional and len(value) == 0):
                inputs.append("")
            else:
                inputs.append(m.const(value, dtype))
        while inputs and inputs[-1] == "":
            inputs.pop()

    return translate


def _clip(m, inputs, attrs, sample):
    dtype = sample.inputs[0].dtype
    lo, hi = attrs.pop("min", -math.inf), attrs.pop("max", math.inf)
    inputs += [m.const(lo, dtype) if lo != -math.inf else "", m.const(hi, dtype) if hi != math.inf else ""]


def _pad(m, inputs, attrs, sample):
    inputs.append(m.const(attrs.pop("pads")))
    value = attrs.pop("value", 0.0)
    if attrs.get("mode", "constant") == "constant":
        inputs.append(m.const(value, sample.inputs[0].dtype))


def _resize(m, inputs, attrs, sample):
    shape = sample.inputs[0].shape
    scales, sizes, roi = attrs.pop("scales", []), attrs.pop("sizes", []), attrs.pop("roi", [])
    lead = not attrs.get("axes") and len(scales or sizes) == len(shape) - 2  # the axes after N and C
    inputs.append(m.const(roi, "float32") if roi else "")
    if scales:
        inputs.append(m.const(([1.0, 1.0] if lead else []) + list(scales), "float32"))
    else:
        inputs += ["", m.const((list(shape[:2]) if lead else []) + list(sizes))]


def _dtype_attrs(*names):
    def translate(m, inputs, attrs, sample):
        from ..convert.onnx_common import numpy_to_onnx

        for name in names:
            if attrs.get(name):
                attrs[name] = numpy_to_onnx(attrs[name])
            else:
                attrs.pop(name, None)

    return translate


def _string_locale(m, inputs, attrs, sample):
    """ONNX Runtime builds its default locale, en_US, only where that locale is installed (rarely on CI
    machines); C.UTF-8 (always there) maps case the same way for the characters the samples hold."""
    if attrs.get("locale") in (None, "", "en_US", "en_US.UTF-8"):
        attrs["locale"] = "C.UTF-8"


def _tree_base_values(m, inputs, attrs, sample):
    """mnn adds a single base value to every target (as for a single target); ONNX requires one per target."""
    base, n = attrs.get("base_values") or [], attrs.get("n_targets", 1)
    if len(base) == 1 and n > 1:
        attrs["base_values"] = list(base) * n


def _layer_norm(m, inputs, attrs, sample):
    if len(inputs) > 1 and inputs[1]:
        return
    x = sample.inputs[0]
    ones = m.const(np.ones(x.shape[attrs.get("axis", -1) % x.ndim :]), x.dtype)  # ONNX requires a scale
    inputs[1:2] = [ones]


def _scalar_input(name, position, shape=()):
    """Move int attribute `name` into an int64 input at `position` (a scalar, or shape (1,))."""

    def translate(m, inputs, attrs, sample):
        inputs.insert(position, m.const(np.full(shape, attrs.pop(name, 0))))

    return translate


def _batch_major_rnn(m, inputs, attrs, sample):
    """onnxruntime runs only layout=0 (time-major): transpose around it for layout=1."""
    if attrs.pop("layout", 0) != 1:
        return
    for i, perm in ((0, [1, 0, 2]), (5, [1, 0, 2]), (6, [1, 0, 2])):  # X, initial_h, initial_c
        if i < len(inputs) and inputs[i]:
            m.node("Transpose", [inputs[i]], [f"{inputs[i]}_t"], perm=perm)
            inputs[i] = f"{inputs[i]}_t"
    m.output_perms = {0: [2, 0, 1, 3], 1: [1, 0, 2], 2: [1, 0, 2]}  # Y, Y_h, Y_c back to batch-major


_REDUCE = (
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL2",
    "ReduceL1",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
)

TRANSLATE = {
    "Clip": _clip,
    "Reshape": _to_inputs("shape"),
    "Slice": _to_inputs("starts", "ends", "axes", "steps", optional=("axes", "steps")),
    "Pad": _pad,
    "Squeeze": _to_inputs("axes", optional=("axes",)),
    "Unsqueeze": _to_inputs("axes"),
    "Resize": _resize,
    "Expand": _to_inputs("shape"),
    "Tile": _to_inputs("repeats"),
    "Split": _to_inputs("split", optional=("split",)),
    "Cast": _dtype_attrs("to"),
    "BitCast": _dtype_attrs("to"),
    "LayerNormalization": _layer_norm,
    "StringNormalizer": _string_locale,
    "TreeEnsembleRegressor": _tree_base_values,
    **{op: _to_inputs("axes", optional=("axes",)) for op in _REDUCE},
    # ops of other families whose ONNX form takes an input for one of our attributes
    "CumSum": _scalar_input("axis", 1),
    "CumProd": _scalar_input("axis", 1),
    "TopK": _scalar_input("k", 1, shape=(1,)),
    "Trilu": _scalar_input("k", 1),
    "OneHot": _scalar_input("depth", 1),
    "EyeLike": _dtype_attrs("dtype"),
    "RNN": _batch_major_rnn,
    "GRU": _batch_major_rnn,
    "LSTM": _batch_major_rnn,
}

#: ops of ours that are ONNX subgraphs: op -> build(model, inputs, output)
SUBGRAPHS = {
    "Silu": lambda m, ins, out: (m.node("Sigmoid", ins, ["sig"]), m.node("Mul", [ins[0], "sig"], [out])),
}


def _activation(m, kind, alpha, beta, src, out, dtype):
    """Append the ONNX node(s) of a fused activation."""
    if kind == "relu":
        m.node("Relu", [src], [out])
    elif kind == "clip":
        m.node("Clip", [src, m.const(alpha, dtype), m.const(beta, dtype)], [out])
    elif kind == "leaky_relu":
        m.node("LeakyRelu", [src], [out], alpha=alpha)
    elif kind == "hard_sigmoid":
        m.node("HardSigmoid", [src], [out], alpha=alpha, beta=beta)
    elif kind == "silu":
        m.node("Sigmoid", [src], ["act_sig"])
        m.node("Mul", [src, "act_sig"], [out])
    else:
        op = {"sigmoid": "Sigmoid", "gelu": "Gelu", "tanh": "Tanh", "hard_swish": "HardSwish"}[kind]
        m.node(op, [src], [out])


def _onnx_attr_value(spec, value):
    if spec.kind == "tensor" and isinstance(value, np.ndarray):
        from onnx import numpy_helper

        return numpy_helper.from_array(value)
    if spec.kind == "float":
        return float(value)
    if spec.kind == "floats":
        return [float(v) for v in value]
    if spec.kind == "ints":
        return [int(v) for v in value]
    return value


def _opsets(op: str) -> list:
    from onnx import helper

    opsets = [helper.make_opsetid("", EVALUATOR_OPSET.get(op, OPSET))]
    if op in DOMAIN:
        opsets.append(helper.make_opsetid(DOMAIN[op], ML_OPSET if DOMAIN[op] == "ai.onnx.ml" else 1))
    return opsets


def build_model(op: str, sample, n_outputs: int, out_dtypes: list):
    """The single-node ONNX model equivalent to `op` on `sample` (plus a fused activation)."""
    import onnx
    from onnx import helper

    from ..convert.onnx_common import numpy_to_onnx

    schema = all_schemas()[op]
    m = _Model()
    inputs = ["" if x is None else f"in{i}" for i, x in enumerate(sample.inputs)]
    attrs = dict(sample.attrs)
    act = (attrs.pop("activation", "none"), attrs.pop("act_alpha", 0.0), attrs.pop("act_beta", 0.0))
    outputs = [f"out{i}" for i in range(n_outputs)]
    main_out = ["pre_activation"] if act[0] != "none" else list(outputs)
    if op in SUBGRAPHS:
        SUBGRAPHS[op](m, inputs, main_out[0])
    else:
        if op in TRANSLATE:
            TRANSLATE[op](m, inputs, attrs, sample)
        for i, name in (schema.value_inputs or {}).items():  # given as an input too: ONNX reads only that
            if i < len(inputs) and inputs[i]:
                attrs.pop(name, None)
        onnx_attrs = {k: _onnx_attr_value(schema.attrs[k], v) if k in schema.attrs else v for k, v in attrs.items()}
        onnx_attrs = {k: v for k, v in onnx_attrs.items() if not (isinstance(v, list) and not v) and v is not None}
        onnx_op, domain = RENAME.get(op, op), DOMAIN.get(op, "")
        if domain != "com.microsoft":  # attributes ONNX requires but we default: pass our default
            full = schema.check_attrs(sample.attrs, op)
            onnx_schema = onnx.defs.get_schema(
                onnx_op,
                EVALUATOR_OPSET.get(op, OPSET) if not domain else (ML_OPSET if domain == "ai.onnx.ml" else 1),
                domain,
            )
            for name, spec in onnx_schema.attributes.items():
                if spec.required and name not in onnx_attrs and name in full:
                    onnx_attrs[name] = _onnx_attr_value(schema.attrs[name], full[name])
        raw = [f"raw{i}" if i in m.output_perms else name for i, name in enumerate(main_out)]
        m.node(onnx_op, inputs, raw, domain=domain, **onnx_attrs)
        for i, perm in m.output_perms.items():
            if i < len(raw):
                m.node("Transpose", [raw[i]], [main_out[i]], perm=perm)
    if act[0] != "none":
        _activation(m, act[0], float(act[1]), float(act[2]), main_out[0], outputs[0], out_dtypes[0])
    graph_inputs = [
        helper.make_tensor_value_info(f"in{i}", numpy_to_onnx(str(x.dtype)), x.shape)
        for i, x in enumerate(sample.inputs)
        if x is not None
    ]
    graph_outputs = [
        helper.make_tensor_value_info(name, numpy_to_onnx(dt), None) for name, dt in zip(outputs, out_dtypes)
    ]
    graph = helper.make_graph(m.nodes, f"single_{op}", graph_inputs, graph_outputs, initializer=m.initializers)
    model = helper.make_model(graph, opset_imports=_opsets(op))
    model.ir_version = 10
    return model


# -- running the model -------------------------------------------------------------------------


def engine(op: str, use: str | None = None) -> str:
    """Which implementation judges `op`: "onnxruntime" or "evaluator" (onnx.reference); `use` forces one."""
    if use is not None:
        return use
    if op in EVALUATOR_OPSET or op in EXPORTED_ON_EVALUATOR:
        return "evaluator"
    return "onnxruntime"


def _exported_model(op: str, sample, expected: list):
    """The one-node mnn graph through mnn's exporter (for the ops only it translates)."""
    from ..convert import to_onnx
    from ..graph.ir import Node, SequenceInfo, TensorInfo

    graph = Graph(name=f"oracle_{op}")
    names = []
    for i, x in enumerate(sample.inputs):
        names.append("" if x is None else f"in{i}")
        if isinstance(x, list):
            graph.inputs[f"in{i}"] = SequenceInfo(None, str(x[0].dtype) if x else "float32")
        elif x is not None:
            graph.inputs[f"in{i}"] = TensorInfo(x.shape, str(x.dtype))
    outputs = [f"out{i}" for i in range(len(expected))]
    graph.nodes.append(Node(op, names, outputs, dict(sample.attrs), op.lower()))
    graph.outputs = outputs
    return to_onnx(graph, opset=OPSET)


_SESSION_OPTIONS = None


def _ort_session(model):
    import onnxruntime as ort

    global _SESSION_OPTIONS
    if _SESSION_OPTIONS is None:
        _SESSION_OPTIONS = ort.SessionOptions()
        _SESSION_OPTIONS.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        _SESSION_OPTIONS.intra_op_num_threads = 1
        _SESSION_OPTIONS.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), _SESSION_OPTIONS, providers=["CPUExecutionProvider"])


def skip_reason(op: str, sample) -> str | None:
    """Why this sample has no independent result, or None when it has one."""
    import onnx

    if op == "StringNormalizer" and sample.attrs.get("locale") not in (None, "", "en_US", "en_US.UTF-8"):
        return "StringNormalizer with a locale other than en_US: tests/test_strings.py checks it"
    if (
        any(isinstance(x, np.ndarray) and x.dtype.name in LOW_PRECISION_DTYPES for x in sample.inputs)
        and engine(op) == "onnxruntime"
    ):
        return (
            "onnxruntime's Python binding takes no bfloat16/float8/int4 arrays; tests/test_lowp.py and the "
            "ONNX conformance suite check these casts"
        )
    if op not in EXPORTED and op not in SUBGRAPHS and op not in DOMAIN and not onnx.defs.has(RENAME.get(op, op)):
        return f"{op} is an mnn op with no ONNX counterpart"
    return None


def _output_skip_reason(op: str, expected: list) -> str | None:
    if (
        any(isinstance(e, np.ndarray) and e.dtype.name in LOW_PRECISION_DTYPES for e in expected)
        and engine(op) == "onnxruntime"
    ):
        return (
            "onnxruntime's Python binding returns no bfloat16/float8/int4 arrays; tests/test_lowp.py checks these casts"
        )
    return None


def _has_empty(values: list) -> bool:
    return any(isinstance(v, np.ndarray) and v.size == 0 for v in values)


def covered_ops() -> dict[str, str]:
    """op -> the engine that judges it, for every op with at least one non-empty sample (its schema's, or
    onnx_samples' where the schema has none) that the oracle judges rather than skips: what
    tests/test_reference_vs_onnxruntime.py and tests/test_oracle_extra.py compare (tests/test_oracle_coverage.py
    reads this declaration)."""
    from .onnx_samples import extra_samples

    extra, covered = extra_samples(), {}
    for op, schema in all_schemas().items():
        samples = extra.get(op) or (schema.samples(np.random.default_rng(0)) if schema.samples else [])
        for sample in samples:
            if skip_reason(op, sample) or _has_empty(sample.inputs):
                continue
            expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
            if not _output_skip_reason(op, expected) and not _has_empty(expected):
                covered[op] = engine(op)
                break
    return covered


def oracle_outputs(op: str, sample, expected: list, use: str | None = None) -> list:
    """The independent outputs of `op` on `sample` (`expected`, the reference's, give the output count and
    dtypes), on `use` ("onnxruntime", "evaluator"; default: engine(op)). Raises OracleSkip where the sample
    has none."""
    reason = skip_reason(op, sample) or _output_skip_reason(op, expected)
    if reason:
        raise OracleSkip(reason)
    if op in EXPORTED:
        model = _exported_model(op, sample, expected)
    else:
        model = build_model(op, sample, len(expected), [_dtype_name(e) for e in expected])
    feeds = {
        f"in{i}": (list(x) if isinstance(x, list) else np.asarray(x))
        for i, x in enumerate(sample.inputs)
        if x is not None
    }
    empty = any(isinstance(x, np.ndarray) and x.size == 0 for x in sample.inputs) or any(
        isinstance(e, np.ndarray) and e.size == 0 for e in expected
    )
    try:
        if engine(op, use) == "evaluator":
            from onnx.reference import ReferenceEvaluator

            outs = list(ReferenceEvaluator(model).run(None, feeds))
            if op == "Optional":  # onnx.reference holds an optional's value in a one-element list
                outs = [o[0] if isinstance(o, list) and len(o) == 1 else o for o in outs]
            if op in EVALUATOR_UPCASTS:
                outs = [o.astype(e.dtype) for o, e in zip(outs, expected)]
            return outs
        return list(_ort_session(model).run(None, feeds))
    except Exception as exc:  # noqa: BLE001  ORT's own errors are plain RuntimeErrors
        if empty:
            raise OracleSkip(f"the oracle rejects this empty-tensor case: {str(exc).splitlines()[0][:200]}") from exc
        raise


def _dtype_name(e) -> str:
    if isinstance(e, list):
        return "float32"
    return str(e.dtype) if e.dtype != object else "object"


def assert_matches(op: str, got: list, expected: list, where: str) -> None:
    """The oracle's outputs `got` against the reference's `expected` (shape, dtype, then values)."""
    assert len(got) == len(expected), f"{where}: {len(got)} outputs from the oracle, {len(expected)} from reference"
    for k, (g, e) in enumerate(zip(got, expected)):
        if isinstance(e, list):  # a sequence
            assert len(g) == len(e), f"{where} output {k}: sequence of {len(g)}, reference {len(e)}"
            assert_matches(op, list(g), e, f"{where} output {k}")
            continue
        g = np.asarray(g)
        assert g.shape == e.shape, f"{where} output {k}: oracle shape {g.shape}, reference {e.shape}"
        assert g.dtype == e.dtype, f"{where} output {k}: oracle dtype {g.dtype}, reference {e.dtype}"
        if e.dtype.name in LOW_PRECISION_DTYPES:  # ml_dtypes: compare the values they stand for
            np.testing.assert_array_equal(e.astype(np.float32), g.astype(np.float32), err_msg=where)
        elif e.dtype == object or e.dtype.kind in "bU":
            np.testing.assert_array_equal(e, g, err_msg=where)
        else:
            rtol, atol = tolerance(op, str(e.dtype), "oracle")
            if np.issubdtype(e.dtype, np.floating):
                np.testing.assert_allclose(e, g, rtol=rtol, atol=atol, err_msg=where)
            else:  # integers: exact, or within the table's steps
                diff = np.abs(e.astype(np.int64) - g.astype(np.int64))
                assert diff.size == 0 or diff.max() <= atol, f"{where} output {k}: off by {diff.max()} steps"

"""The oracle's oracle: every reference kernel against onnxruntime.

For each op and each of its samples we build the equivalent one-node ONNX
model (opset 20), run it on onnxruntime's CPU provider and compare with the
reference output. Our static attributes become the constant inputs ONNX wants
(Reshape's shape, Slice's starts/ends/axes/steps, Pad's pads, ...), and a fused
`activation` becomes a second node after the first.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper, numpy_helper  # noqa: E402

from mnn_core.convert.onnx_common import numpy_to_onnx  # noqa: E402
from mnn_core.graph.ir import LOW_PRECISION_DTYPES, Graph  # noqa: E402
from mnn_core.ops import all_schemas  # noqa: E402

OPSET = 20  # Gelu is an ONNX op from 20 on

#: (rtol, atol) by output dtype. The reference accumulates in float64, onnxruntime in
#: float32, so float32 results differ by rounding only; float16 ones may differ by one
#: float16 ulp (about 1e-3 relative) because each rounds to float16 at different steps.
TOLERANCE = {"float32": (1e-5, 1e-5), "float16": (1e-3, 1e-3)}


class _Model:
    """Collects the nodes and constants of one small ONNX graph."""

    def __init__(self):
        self.nodes, self.initializers = [], []
        self.output_perms = {}  # output index -> Transpose perm applied after the op

    def const(self, value, dtype="int64") -> str:
        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))


# -- translating static attributes into ONNX inputs ------------------------------------------
# Each function takes (model, inputs, attrs, sample) and edits inputs / attrs in place.


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


def _cast(m, inputs, attrs, sample):
    attrs["to"] = numpy_to_onnx(attrs["to"])


def _layer_norm(m, inputs, attrs, sample):
    if len(inputs) > 1 and inputs[1]:
        return
    x = sample.inputs[0]
    ones = m.const(np.ones(x.shape[attrs.get("axis", -1) % x.ndim:]), x.dtype)  # ONNX requires a scale
    inputs[1:2] = [ones]


def _scalar_input(name, position, shape=()):
    """Move int attribute `name` into an int64 input at `position` (a scalar, or shape (1,))."""

    def translate(m, inputs, attrs, sample):
        inputs.insert(position, m.const(np.full(shape, attrs.pop(name, 0))))

    return translate


def _eyelike(m, inputs, attrs, sample):
    if attrs.get("dtype"):
        attrs["dtype"] = numpy_to_onnx(attrs["dtype"])
    else:
        attrs.pop("dtype", None)


def _batch_major_rnn(m, inputs, attrs, sample):
    """onnxruntime runs only layout=0 (time-major): transpose around it for layout=1."""
    if attrs.pop("layout", 0) != 1:
        return
    for i, perm in ((0, [1, 0, 2]), (5, [1, 0, 2]), (6, [1, 0, 2])):  # X, initial_h, initial_c
        if i < len(inputs) and inputs[i]:
            m.node("Transpose", [inputs[i]], [f"{inputs[i]}_t"], perm=perm)
            inputs[i] = f"{inputs[i]}_t"
    m.output_perms = {0: [2, 0, 1, 3], 1: [1, 0, 2], 2: [1, 0, 2]}  # Y, Y_h, Y_c back to batch-major


_REDUCE = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceL1", "ReduceSumSquare",
           "ReduceLogSum", "ReduceLogSumExp")

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
    "Cast": _cast,
    "LayerNormalization": _layer_norm,
    **{op: _to_inputs("axes", optional=("axes",)) for op in _REDUCE},
    # ops of other families whose ONNX form takes an input for one of our attributes
    "CumSum": _scalar_input("axis", 1),
    "CumProd": _scalar_input("axis", 1),
    "TopK": _scalar_input("k", 1, shape=(1,)),
    "Trilu": _scalar_input("k", 1),
    "OneHot": _scalar_input("depth", 1),
    "EyeLike": _eyelike,
    "RNN": _batch_major_rnn,
    "GRU": _batch_major_rnn,
    "LSTM": _batch_major_rnn,
}

#: ops whose ONNX name differs (same semantics)
RENAME = {"Scatter": "ScatterElements"}  # Scatter is deprecated since opset 11

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
    if spec.kind == "float":
        return float(value)
    if spec.kind == "floats":
        return [float(v) for v in value]
    if spec.kind == "ints":
        return [int(v) for v in value]
    return value


def build_model(op: str, sample, n_outputs: int, out_dtypes: list):
    """The single-node ONNX model equivalent to `op` on `sample` (plus a fused activation)."""
    schema = all_schemas()[op]
    m = _Model()
    inputs = ["" if x is None else f"in{i}" for i, x in enumerate(sample.inputs)]
    attrs = dict(sample.attrs)
    act = (attrs.pop("activation", "none"), attrs.pop("act_alpha", 0.0), attrs.pop("act_beta", 0.0))
    outputs = [f"out{i}" for i in range(n_outputs)]
    main_out = list(outputs)
    if act[0] != "none":
        main_out = ["pre_activation"]
    if op in SUBGRAPHS:
        SUBGRAPHS[op](m, inputs, main_out[0])
    else:
        if op in TRANSLATE:
            TRANSLATE[op](m, inputs, attrs, sample)
        onnx_attrs = {k: _onnx_attr_value(schema.attrs[k], v) if k in schema.attrs else v for k, v in attrs.items()}
        onnx_attrs = {k: v for k, v in onnx_attrs.items() if not (isinstance(v, list) and not v)}
        onnx_op = RENAME.get(op, op)
        # attributes ONNX requires but we default: pass our default
        full = schema.check_attrs(sample.attrs, op)
        for name, spec in onnx.defs.get_schema(onnx_op, OPSET).attributes.items():
            if spec.required and name not in onnx_attrs and name in full:
                onnx_attrs[name] = _onnx_attr_value(schema.attrs[name], full[name])
        raw = [f"raw{i}" if i in m.output_perms else name for i, name in enumerate(main_out)]
        m.node(onnx_op, inputs, raw, **onnx_attrs)
        for i, perm in m.output_perms.items():
            if i < len(raw):
                m.node("Transpose", [raw[i]], [main_out[i]], perm=perm)
    if act[0] != "none":
        _activation(m, act[0], float(act[1]), float(act[2]), main_out[0], outputs[0], out_dtypes[0])
    graph_inputs = [helper.make_tensor_value_info(f"in{i}", numpy_to_onnx(str(x.dtype)), x.shape)
                    for i, x in enumerate(sample.inputs) if x is not None]
    graph_outputs = [helper.make_tensor_value_info(name, numpy_to_onnx(dt), None)
                     for name, dt in zip(outputs, out_dtypes)]
    graph = helper.make_graph(m.nodes, f"single_{op}", graph_inputs, graph_outputs, initializer=m.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    return model


def _in_opset(op: str) -> bool:
    try:
        onnx.defs.get_schema(op, OPSET)
    except onnx.defs.SchemaError:
        return False
    return True


#: ops whose attributes ONNX takes as inputs in ways only the real exporter translates
EXPORTER_ONLY = frozenset({"Col2Im", "DFT", "STFT"})


def _cases():
    for op, schema in all_schemas().items():
        if schema.samples is None:
            continue
        for i, sample in enumerate(schema.samples(np.random.default_rng(0))):
            yield pytest.param(op, i, sample, id=f"{op}-{i}")


_SESSION_OPTIONS = ort.SessionOptions()
_SESSION_OPTIONS.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
_SESSION_OPTIONS.intra_op_num_threads = 1
_SESSION_OPTIONS.log_severity_level = 3


@pytest.mark.parametrize("op, index, sample", list(_cases()))
def test_reference_matches_onnxruntime(op, index, sample):
    onnx_op = RENAME.get(op, op)
    if op in EXPORTER_ONLY:
        pytest.skip(f"{op} takes ONNX inputs this table does not translate; "
                    "tests/test_onnx_export.py checks it through mnn_core.convert.to_onnx")
    if op not in SUBGRAPHS and not onnx.defs.has(onnx_op):
        pytest.skip(f"{op} is an mnn op with no ONNX counterpart")
    if op not in SUBGRAPHS and not _in_opset(onnx_op):
        first = onnx.defs.get_schema(onnx_op).since_version
        pytest.skip(f"{op} joined ONNX at opset {first}, after the opset {OPSET} tested here")
    schema = all_schemas()[op]
    if any(isinstance(v, Graph) for v in sample.attrs.values()) or \
            any(isinstance(x, list) for x in sample.inputs):
        pytest.skip(f"{op} takes a body or a sequence: tests/test_control_flow.py checks it against onnxruntime "
                    "through imported ONNX models")
    if op == "StringNormalizer":
        pytest.skip("onnxruntime's StringNormalizer needs an installed en_US locale; tests/test_strings.py checks it")
    expected = schema.reference(list(sample.inputs), schema.check_attrs(sample.attrs, op))
    if any(isinstance(e, np.ndarray) and e.dtype.name in LOW_PRECISION_DTYPES
           for e in list(expected) + list(sample.inputs)):
        pytest.skip("onnxruntime's Python binding takes and returns no bfloat16/float8/int4 arrays; "
                    "tests/test_lowp.py and the ONNX conformance suite check these casts")
    if any(isinstance(e, list) for e in expected):
        pytest.skip(f"{op} gives a sequence: tests/test_control_flow.py checks it against onnxruntime")
    model = build_model(op, sample, len(expected), [str(e.dtype) for e in expected])
    feeds = {f"in{i}": np.asarray(x) for i, x in enumerate(sample.inputs) if x is not None}
    empty = any(x is not None and x.size == 0 for x in sample.inputs) or any(e.size == 0 for e in expected)
    try:
        sess = ort.InferenceSession(model.SerializeToString(), _SESSION_OPTIONS, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as exc:  # noqa: BLE001  ORT's own errors are plain RuntimeErrors
        if empty:
            pytest.skip(f"onnxruntime rejects this empty-tensor case: {str(exc).splitlines()[0][:200]}")
        raise
    where = f"{op} sample {index} [{sample.label}]: reference (ACTUAL) vs onnxruntime (DESIRED)"
    assert len(got) == len(expected), f"{where}: {len(got)} outputs from onnxruntime, {len(expected)} from reference"
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, f"{where} output {k}: onnxruntime shape {g.shape}, reference {e.shape}"
        assert g.dtype == e.dtype, f"{where} output {k}: onnxruntime dtype {g.dtype}, reference {e.dtype}"
        if e.dtype.name in LOW_PRECISION_DTYPES:  # ml_dtypes: compare the values they stand for
            np.testing.assert_array_equal(e.astype(np.float32), g.astype(np.float32), err_msg=where)
        elif np.issubdtype(e.dtype, np.floating):
            rtol, atol = TOLERANCE.get(str(e.dtype), TOLERANCE["float32"])
            np.testing.assert_allclose(e, g, rtol=rtol, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(e, g, err_msg=where)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("lo,hi", [(None, 1.0), (0.0, None), (math.nan, 1.0), (0.0, math.nan), (None, None),
                                   (2.0, 1.0)])
def test_clip_bounds_as_onnxruntime(dtype, lo, hi):
    """Absent bounds are the dtype's finite extremes (so an infinite input comes out finite), a NaN
    bound is no bound; the values include both infinities and NaN. (An explicit infinite bound is
    taken as absent: mnn's attribute cannot tell them apart, and ONNX Runtime keeps an infinite input there.)"""
    from mnn_core.ops import run_reference

    x = np.array([-np.inf, -70000.0, -1.0, 0.0, 0.5, 2.0, np.nan, 70000.0, np.inf], dtype)
    m = _Model()
    ins = ["x", "" if lo is None else m.const(lo, dtype), "" if hi is None else m.const(hi, dtype)]
    while ins[-1] == "":
        ins.pop()
    m.node("Clip", ins, ["y"])
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(m.nodes, "clip", [helper.make_tensor_value_info("x", kind, list(x.shape))],
                              [helper.make_tensor_value_info("y", kind, list(x.shape))], m.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 9
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    attrs = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
    got = run_reference("Clip", [x], attrs)[0]
    np.testing.assert_array_equal(got, want)

"""The ONNX op table of the importer: how each ONNX op (at each opset) becomes mnn ops.

Most ONNX ops map one-to-one onto the mnn op of the same name (mnn attribute
names follow ONNX). The entries here cover the differences:

- inputs that newer opsets pass as tensors and mnn takes as attributes (Reshape
  shape, Slice starts, Reduce axes, ...): mnn's ops take them at the same
  positions as value inputs (`OpSchema.value_inputs`); `ctx.emit` makes the
  constant ones attributes, the others are bound at resize;
- opset changes of meaning (Softmax before 13 flattens to 2-D, Clip before 11
  has attributes, Upsample is Resize, ...);
- ops that only exist at import (Constant, Identity, Dropout, CastLike,
  variadic Sum/Mean/Max/Min).

An ONNX op with no entry whose name is an mnn op maps onto it directly; an
ONNX attribute mnn does not know is accepted only when it has its default.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ops import all_schemas
from .onnx_common import DEFAULT_DOMAIN, NodeUnsupported, as_int_list, onnx_type_name

HANDLERS: dict[tuple[str, str], Callable] = {}


def handles(*ops: str, domain: str = DEFAULT_DOMAIN):
    def deco(fn):
        for op in ops:
            HANDLERS[(domain, op)] = fn
        return fn

    return deco


# -- the generic mapping -----------------------------------------------------------------------


def onnx_default(node, attr: str):
    """The default value ONNX's schema gives an attribute, or a sentinel when none."""
    from onnx import defs

    from .onnx_common import attribute_value

    try:
        schema = defs.get_schema(node.op, node.opset, "" if node.domain == DEFAULT_DOMAIN else node.domain)
        default = schema.attributes[attr].default_value
    except Exception:
        return _NO_DEFAULT
    if not default.name and default.type == 0:
        return _NO_DEFAULT
    return attribute_value(default)


_NO_DEFAULT = object()


def mnn_attrs(node, mnn_op: str, rename: dict | None = None, ignore=(), values: dict | None = None) -> dict:
    """ONNX attributes of `node` as attributes of mnn op `mnn_op`; unknown ones must be default."""
    schema = all_schemas()[mnn_op]
    rename = rename or {}
    out = {}
    for key, value in node.attrs.items():
        target = rename.get(key, key)
        if target in schema.attrs:
            out[target] = value
        elif key in ignore:
            continue
        else:
            default = onnx_default(node, key)
            if default is _NO_DEFAULT or not _same(default, value):
                raise NodeUnsupported(f"attribute {key}={_short(value)} is not supported by mnn {mnn_op}")
    out.update(values or {})
    return out


def _same(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except Exception:
        return a == b


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def direct(ctx, node, mnn_op: str | None = None, inputs=None, values=None, rename=None, ignore=()):
    mnn_op = mnn_op or node.op
    if mnn_op not in all_schemas():
        raise NodeUnsupported(f"mnn has no op {mnn_op}")
    attrs = mnn_attrs(node, mnn_op, rename, ignore, values)
    ctx.emit(mnn_op, list(node.inputs if inputs is None else inputs), node.outputs, attrs, node.name)


def generic(ctx, node):
    direct(ctx, node)


@handles("QLinearAdd", domain="com.microsoft")
def _qlinear_add(ctx, node):
    """ONNX Runtime's contrib quantized add (QOperator models, and mnn's own exports)."""
    direct(ctx, node)


def static(since: int, **positions: tuple[int, Callable] | int):
    """A handler folding constant inputs (from opset `since`) into attributes: attr=(index, convert),
    for ops whose mnn form has no value inputs (the input must be a constant)."""

    def handler(ctx, node):
        values = {}
        cut = len(node.inputs)
        if node.opset >= since:
            for attr, spec in positions.items():
                index, convert = spec if isinstance(spec, tuple) else (spec, as_int_list)
                value = ctx.static_input(node, index, attr) if index < len(node.inputs) else None
                if value is not None:
                    values[attr] = convert(value)
                cut = min(cut, index)
        direct(ctx, node, inputs=node.inputs[:cut], values=values)

    return handler


def _const(ctx, value: np.ndarray, base: str) -> str:
    name = ctx.fresh(base)
    ctx.set_const(name, value)
    return name


def _float(v) -> float:
    return float(np.asarray(v).reshape(-1)[0])


def _int(v) -> int:
    return int(np.asarray(v).reshape(-1)[0])


# -- constants and values that exist only at import ---------------------------------------------


@handles("Constant")
def _constant(ctx, node):
    a = node.attrs
    if "value" in a:
        value = a["value"]
    elif "value_float" in a:
        value = np.array(a["value_float"], np.float32)
    elif "value_floats" in a:
        value = np.array(a["value_floats"], np.float32)
    elif "value_int" in a:
        value = np.array(a["value_int"], np.int64)
    elif "value_ints" in a:
        value = np.array(a["value_ints"], np.int64)
    elif "value_string" in a or "value_strings" in a:
        value = np.array(a.get("value_string", a.get("value_strings")), dtype=object)
    elif "sparse_value" in a:
        raise NodeUnsupported("sparse Constant values are not supported")
    else:
        raise NodeUnsupported("Constant without a value")
    ctx.set_const(node.outputs[0], value)


@handles("Identity")
def _identity(ctx, node):
    src = node.inputs[0]
    if ctx.const(src) is not None:
        ctx.set_const(node.outputs[0], ctx.const(src))
    else:
        ctx.alias(node.outputs[0], src)


@handles("Dropout")
def _dropout(ctx, node):
    training = node.input(2) and ctx.const(node.input(2))
    if node.input(2) and training is None:
        raise NodeUnsupported("unsupported: dynamic training_mode of Dropout", ctx.depends([node.input(2)]))
    if training is not None and bool(np.asarray(training).reshape(-1)[0]) and _ratio(ctx, node) > 0:
        raise NodeUnsupported("Dropout in training mode is random; mnn imports inference graphs")
    ctx.alias(node.outputs[0], node.inputs[0])
    if len(node.outputs) > 1:  # the mask: all true
        shape = ctx.emit("Shape", [node.inputs[0]], [ctx.fresh(f"{node.name}.shape")])[0]
        ctx.emit("ConstantOfShape", [shape], node.outputs[1:2], {"value": np.ones(1, bool)}, f"{node.name}.mask")


def _ratio(ctx, node) -> float:
    if node.input(1):  # a ratio fed at run time is bound then (the model is specialized to its value)
        return _float(ctx.static_input(node, 1, "ratio"))
    return float(node.attrs.get("ratio", 0.5))


@handles("Shape")
def _shape(ctx, node):
    values = {k: node.attrs[k] for k in ("start", "end") if k in node.attrs}
    ctx.emit("Shape", node.inputs, node.outputs, values, node.name)  # a constant where the dims are static


@handles("ConstantOfShape")
def _constant_of_shape(ctx, node):
    value = node.attrs.get("value", np.zeros(1, np.float32))
    ctx.emit("ConstantOfShape", node.inputs, node.outputs, {"value": np.asarray(value)}, node.name)
    if node.outputs[0] not in ctx.consts:
        ctx.fills[node.outputs[0]] = np.asarray(value).reshape(-1)[0]


@handles("Cast")
def _cast(ctx, node):
    _emit_cast(ctx, node, onnx_type_name(node.attrs["to"]))


@handles("CastLike")
def _cast_like(ctx, node):
    _emit_cast(ctx, node, ctx.dtype(node.inputs[1]))


def _emit_cast(ctx, node, to: str):
    x, out = node.inputs[0], node.outputs[0]
    values = {
        "to": to,
        "saturate": int(node.attrs.get("saturate", 1)),
        "round_mode": node.attrs.get("round_mode", "up"),
    }
    if ctx.const(x) is not None:
        ctx.set_const(out, _cast_array(ctx.const(x), to, values))
    elif ctx.dtype(x) == to:
        ctx.alias(out, x)
    else:
        direct(ctx, node, "Cast", inputs=[x], values=values, ignore=("to", "saturate", "round_mode"))


def _cast_array(a: np.ndarray, to: str, values: dict) -> np.ndarray:
    from ..ops import lowp

    if a.dtype == object:
        if to == "bool":
            return np.array([str(v).lower() in ("true", "1") for v in a.reshape(-1)]).reshape(a.shape)
        return a.astype(np.float64).astype(to)
    return lowp.cast(a, to, bool(values["saturate"]), values["round_mode"])


# -- inputs that mnn takes as attributes -----------------------------------------------------------


@handles("Reshape")
def _reshape(ctx, node):
    direct(ctx, node, ignore=("shape",) if node.opset < 5 else ())


BIG = 1 << 62  # "to the end" of a Slice


@handles("Slice")
def _slice(ctx, node):
    direct(ctx, node)


@handles("Pad")
def _pad(ctx, node):
    if node.opset < 11:
        values = {"pads": node.attrs.get("pads", node.attrs.get("paddings"))}
        if "value" in node.attrs:
            values["value"] = float(node.attrs["value"])
        return direct(ctx, node, inputs=node.inputs[:1], values=values, ignore=("paddings",))
    axes = ctx.static_input(node, 3, "axes")
    value = ctx.const(node.input(2))
    if ctx.const(node.input(1)) is None or node.input(2) and (value is None or not value.size):
        if axes is not None:
            raise NodeUnsupported("unsupported: Pad with axes and dynamic pads", ctx.depends([node.input(1)]))
        inputs = node.inputs[:2] + ([node.input(2)] if value is None or value.size else [])
        return direct(ctx, node, inputs=inputs)
    pads = as_int_list(ctx.static_input(node, 1, "pads"))
    if axes is not None:  # opset 18: pads for some axes only
        rank = ctx.rank(node.inputs[0])
        full = [0] * (2 * rank)
        axes = [a % rank for a in as_int_list(axes)]
        for i, a in enumerate(axes):
            full[a], full[a + rank] = pads[i], pads[i + len(axes)]
        pads = full
    values = {"pads": pads}
    if value is not None and np.asarray(value).size:
        values["value"] = _float(value)
    direct(ctx, node, inputs=node.inputs[:1], values=values)


@handles("Clip")
def _clip(ctx, node):
    inputs = list(node.inputs)
    for i in (1, 2):  # an empty tensor is an absent bound
        value = ctx.const(node.input(i))
        if value is not None and not value.size:
            inputs[i] = ""
    direct(ctx, node, inputs=inputs)


@handles("Softmax", "LogSoftmax", "Hardmax")
def _softmax(ctx, node):
    axis = node.attrs.get("axis", 1 if node.opset < 13 else -1)
    x = node.inputs[0]
    rank = ctx.rank(x)
    if node.opset >= 13 or axis % max(rank, 1) == rank - 1:
        return direct(ctx, node, values={"axis": axis})
    # before opset 13 the input is flattened to 2-D at `axis`, normalized over the second axis
    flat = ctx.emit("Flatten", [x], [ctx.fresh(f"{node.name}.flat")], {"axis": axis})[0]
    norm = ctx.emit(node.op, [flat], [ctx.fresh(f"{node.name}.2d")], mnn_attrs(node, node.op, values={"axis": 1}))[0]
    shape = ctx.emit("Shape", [x], [ctx.fresh(f"{node.name}.shape")])[0]
    ctx.emit("Reshape", [norm, shape], node.outputs, {}, node.name)


@handles("Sum", "Mean", "Max", "Min")
def _variadic(ctx, node):
    op = {"Sum": "Add", "Mean": "Add"}.get(node.op, node.op)
    ins = list(node.inputs)
    if len(ins) == 1 and node.op != "Mean":
        return _identity(ctx, node)
    acc = ins[0]
    for i, other in enumerate(ins[1:]):
        last = i == len(ins) - 2 and node.op != "Mean"
        out = node.outputs if last else [ctx.fresh(f"{node.name}.{i}")]
        acc = ctx.emit(op, [acc, other], out, {}, node.name if last else None)[0]
    if node.op == "Mean":
        n = ctx.fresh(f"{node.name}.n")
        ctx.set_const(n, np.array(len(ins), dtype=ctx.dtype(ins[0])))
        ctx.emit("Div", [acc, n], node.outputs, {}, node.name)


@handles("Gemm")
def _gemm(ctx, node):
    direct(ctx, node, ignore=("broadcast",))


@handles("BatchNormalization")
def _batchnorm(ctx, node):
    if node.attrs.get("training_mode", 0):
        return _batchnorm_training(ctx, node)
    if len(node.outputs) > 1:
        raise NodeUnsupported("BatchNormalization with mean/variance outputs (training mode)")
    if not node.attrs.get("spatial", 1):
        raise NodeUnsupported("BatchNormalization with spatial=0")
    direct(ctx, node, ignore=("spatial", "is_test", "momentum", "consumed_inputs", "training_mode"))


def _batchnorm_training(ctx, node):
    """ONNX training mode (opset 14+): normalize by the batch statistics; the running statistics
    outputs are input * momentum + batch * (1 - momentum), with the population (biased) variance."""
    if node.opset < 14:
        raise NodeUnsupported("BatchNormalization in training mode before opset 14 (saved statistics outputs)")
    momentum = float(node.attrs.get("momentum", 0.9))
    x, scale, bias, mean, var = node.inputs
    outs = list(node.outputs) + [""] * (3 - len(node.outputs))
    stats = [ctx.fresh(f"{node.name}.{k}") for k in ("batch_mean", "batch_var", "running_mean", "unbiased")]
    ctx.emit(
        "BatchNormTraining",
        [x, scale, bias, mean, var],
        [outs[0] or ctx.fresh(f"{node.name}.y")] + stats,
        {"epsilon": float(node.attrs.get("epsilon", 1e-5)), "momentum": 1.0 - momentum},
        node.name,
    )
    if outs[1]:
        ctx.alias(outs[1], stats[2])  # the running mean follows the same formula (momentum flipped)
    if outs[2]:
        dtype = ctx.dtype(x)
        keep = _const(ctx, np.array(momentum, dtype), f"{node.name}.momentum")
        take = _const(ctx, np.array(1.0 - momentum, dtype), f"{node.name}.one_minus_momentum")
        a = ctx.emit("Mul", [var, keep], [ctx.fresh(f"{node.name}.var_kept")])[0]
        b = ctx.emit("Mul", [stats[1], take], [ctx.fresh(f"{node.name}.var_taken")])[0]
        ctx.emit("Add", [a, b], [outs[2]], {}, f"{node.name}.running_var")


@handles("Upsample")
def _upsample(ctx, node):
    values = {"mode": node.attrs.get("mode", "nearest")}
    inputs = node.inputs[:1]
    if node.opset >= 9:
        inputs = [node.inputs[0], "", node.inputs[1]]  # scales: Resize's input 2
    else:
        values["scales"] = [float(s) for s in np.asarray(node.attrs["scales"]).reshape(-1)]
    if values["mode"] == "nearest":
        values["nearest_mode"] = "floor"
        values["coordinate_transformation_mode"] = "asymmetric"
    elif values["mode"] == "linear":
        values["coordinate_transformation_mode"] = "asymmetric"
    node.attrs = {}
    direct(ctx, node, "Resize", inputs=inputs, values=values)


@handles("Resize")
def _resize(ctx, node):
    """roi (read by tf_crop_and_resize only), scales and sizes are value inputs: constants become
    attributes, the others are bound when a Session knows the input shapes."""
    values = {}
    x = node.inputs[0]
    if node.opset == 10:  # scales at input 1
        values["nearest_mode"] = "floor"
        values["coordinate_transformation_mode"] = "asymmetric"
        return direct(ctx, node, inputs=[x, "", node.input(1)], values=values)
    crop = node.attrs.get("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize"
    inputs = [x, node.input(1) if crop else ""]
    for index in (2, 3):
        name = node.input(index)
        value = ctx.const(name) if name else None
        inputs.append("" if not name or value is not None and not value.size else name)
    direct(ctx, node, inputs=inputs, values=values)


@handles("Flatten")
def _flatten(ctx, node):
    axis = node.attrs.get("axis", 1)
    direct(ctx, node, values={"axis": axis % max(ctx.rank(node.inputs[0]), 1) if axis < 0 else axis})


@handles("Split")
def _split(ctx, node):
    values = {}
    if node.opset < 13 and "split" in node.attrs:
        values["split"] = list(node.attrs["split"])
    given = node.opset >= 13 and node.input(1)
    if not given and not values.get("split") and not node.attrs.get("num_outputs"):
        values["num_outputs"] = len(node.outputs)  # equal parts, one per output
    direct(ctx, node, inputs=node.inputs[:2] if given else node.inputs[:1], values=values)


@handles("OneHot")
def _onehot(ctx, node):
    direct(ctx, node, inputs=[node.inputs[0], node.inputs[2], node.inputs[1]])  # depth: mnn's value input 2


@handles("EyeLike")
def _eyelike(ctx, node):
    values = {}
    if "dtype" in node.attrs:
        values["dtype"] = onnx_type_name(node.attrs["dtype"])
    direct(ctx, node, values=values, ignore=("dtype",))


@handles("Pow")
def _pow(ctx, node):
    base, exponent = node.inputs
    bt, et = ctx.dtype(base), ctx.dtype(exponent)
    if bt == et:
        return direct(ctx, node)
    # ONNX lets the exponent have another type: compute in the base's float type
    if np.dtype(bt).kind == "f":
        e = _cast_to(ctx, exponent, bt)
        return ctx.emit("Pow", [base, e], node.outputs, {}, node.name)
    b = _cast_to(ctx, base, et)
    y = ctx.emit("Pow", [b, exponent], [ctx.fresh(f"{node.name}.float")], {})[0]
    ctx.emit("Cast", [y], node.outputs, {"to": bt}, node.name)


def _cast_to(ctx, value: str, dtype: str) -> str:
    if ctx.const(value) is not None:
        name = ctx.fresh(f"{value}.{dtype}")
        ctx.set_const(name, ctx.const(value).astype(dtype))
        return name
    return ctx.emit("Cast", [value], [ctx.fresh(f"{value}.{dtype}")], {"to": dtype})[0]


# -- 1-D convolution and pooling run as 2-D with a unit height ------------------------------------------

_SPATIAL_1D_ATTRS = {"kernel_shape": 1, "strides": 1, "dilations": 1, "output_padding": 0}


@handles("Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool")
def _spatial(ctx, node):
    x = node.inputs[0]
    if node.op == "MaxPool" and len(node.outputs) > 1 and node.outputs[1]:
        return direct(ctx, node, "MaxPoolWithIndices")
    if ctx.rank(x) != 3:
        return direct(ctx, node)
    if len(node.outputs) > 1:
        raise NodeUnsupported(f"{node.op} with {len(node.outputs)} outputs")
    values = {}
    for key, fill in _SPATIAL_1D_ATTRS.items():
        if node.attrs.get(key):
            values[key] = [fill] + list(node.attrs[key])
    if node.attrs.get("pads"):
        p = node.attrs["pads"]
        values["pads"] = [0, p[0], 0, p[1]]
    if node.attrs.get("output_shape"):
        values["output_shape"] = [1] + list(node.attrs["output_shape"])
    ins = [_unsqueeze(ctx, x, node.name)]
    if node.op in ("Conv", "ConvTranspose"):
        ins.append(_unsqueeze(ctx, node.inputs[1], node.name))
        ins += node.inputs[2:]
    y = ctx.fresh(f"{node.name}.2d")
    node2d = type(node)(node.op, node.domain, node.opset, node.name, ins, [y], {**node.attrs, **values})
    direct(ctx, node2d)
    ctx.emit("Squeeze", [y], node.outputs, {"axes": [2]}, f"{node.name}.squeeze")


def _unsqueeze(ctx, value: str, base: str) -> str:
    return ctx.emit("Unsqueeze", [value], [ctx.fresh(f"{value}.2d")], {"axes": [2]}, f"{base}.unsqueeze")[0]


@handles("RNN", "GRU", "LSTM")
def _recurrent(ctx, node):
    # zero initial states of a dynamic batch (torch exports ConstantOfShape) are the default
    for i in (5, 6):
        if node.input(i) in ctx.fills and ctx.fills[node.input(i)] == 0:
            node.inputs[i] = ""
    values = {}
    if node.attrs.get("activations"):
        values["activation_names"] = ",".join(_ACTIVATION_CASE.get(a.lower(), a) for a in node.attrs["activations"])
    direct(ctx, node, values=values, ignore=("activations",))


_ACTIVATION_CASE = {
    a.lower(): a
    for a in (
        "Sigmoid",
        "Tanh",
        "Relu",
        "Affine",
        "LeakyRelu",
        "ThresholdedRelu",
        "ScaledTanh",
        "HardSigmoid",
        "Elu",
        "Softsign",
        "Softplus",
    )
}


@handles("Gather")
def _gather(ctx, node):
    data, index = node.inputs
    value = ctx.const(index)
    if value is None or value.ndim or ctx.const(data) is not None:
        return direct(ctx, node)
    # a scalar constant index as a 1-element index plus Squeeze: mnn's Session stores
    # constants with np.ascontiguousarray, which turns 0-d arrays into 1-d ones
    axis = node.attrs.get("axis", 0) % max(ctx.rank(data), 1)
    one = ctx.fresh(f"{index}.1d")
    ctx.set_const(one, value.reshape(1))
    y = ctx.emit("Gather", [data, one], [ctx.fresh(f"{node.name}.1d")], {"axis": axis}, node.name)[0]
    ctx.emit("Squeeze", [y], node.outputs, {"axes": [axis]}, f"{node.name}.squeeze")


for _op in ("Momentum", "Adagrad", "Adam"):
    HANDLERS[("ai.onnx.preview.training", _op)] = generic


@handles("DFT")
def _dft(ctx, node):
    # dft_length and (opset 20) axis are value inputs where they are not constants; axis defaults to -2
    values = {"axis": -2} if node.opset >= 20 and not node.input(2) else {}
    direct(ctx, node, values=values)


@handles("STFT")
def _stft(ctx, node):
    # mnn's STFT takes (signal, window) and then its value inputs frame_step, frame_length
    direct(ctx, node, inputs=[node.inputs[0], node.input(2), node.inputs[1], node.input(3)])


for _op in ("Binarizer", "ArrayFeatureExtractor", "LabelEncoder"):
    HANDLERS[("ai.onnx.ml", _op)] = generic


@handles("BitCast")
def _bitcast(ctx, node):
    to = onnx_type_name(node.attrs["to"])
    direct(ctx, node, values={"to": to}, ignore=("to",))


# ops not listed here map onto the mnn op of the same name (if there is one), see generic()


# the handler families kept in modules of their own register into HANDLERS when imported
from . import onnx_control, onnx_quant  # noqa: E402,F401  isort: skip

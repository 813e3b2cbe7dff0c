"""Handlers of MNN's network ops: convolution, pooling, dense layers, normalization, activations."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .record import OpRecord, handles

_PAD_MODES = {1: "VALID", 2: "SAME_UPPER"}


def _activation(ctx, y: str, relu: bool, relu6: bool, op: OpRecord) -> None:
    """MNN folds a following ReLU/ReLU6 into the convolution as flags; mnn takes them as nodes."""
    if relu6:
        ctx.emit("Clip", [y], op.outputs, op.name + ".relu6", min=0.0, max=6.0)
    elif relu:
        ctx.emit("Relu", [y], op.outputs, op.name + ".relu")


@handles("Convolution", "ConvolutionDepthwise", "Deconvolution", "DeconvolutionDepthwise")
def convolution(ctx, op: OpRecord) -> None:
    common = op.table(S.CONV2D["common"])
    if common is None:
        raise ctx.fail(f"op {op.name!r} ({op.type}) has no Convolution2DCommon")
    c = {
        k: common.scalar(i, "int32", 0)
        for k, i in S.CONV2D_COMMON.items()
        if k not in ("padMode", "relu", "relu6", "pads", "outPads", "hasOutputShape")
    }
    defaults = {"kernelX": 1, "kernelY": 1, "strideX": 1, "strideY": 1, "dilateX": 1, "dilateY": 1, "group": 1}
    for k, d in defaults.items():
        if common._field(S.CONV2D_COMMON[k]) == 0:
            c[k] = d
    pad_mode = common.scalar(S.CONV2D_COMMON["padMode"], "int8", 0)
    relu = common.scalar(S.CONV2D_COMMON["relu"], "bool", False)
    relu6 = common.scalar(S.CONV2D_COMMON["relu6"], "bool", False)
    pads = common.ints(S.CONV2D_COMMON["pads"], f"{op.name}'s pads")
    kh, kw, cout = c["kernelY"], c["kernelX"], c["outputCount"]
    if min(kh, kw, c["strideX"], c["strideY"], c["dilateX"], c["dilateY"]) < 1 or cout < 0:
        raise ctx.fail(f"op {op.name!r} ({op.type}) has a kernel, stride or dilation below 1")
    deconv = op.type.startswith("Deconvolution")
    group = cout if op.type.endswith("Depthwise") else max(c["group"], 1)
    if deconv and common.scalar(S.CONV2D_COMMON["hasOutputShape"], "bool", False):
        raise ctx.fail(f"op {op.name!r} ({op.type}) takes its output shape as an input, which mnn does not read")
    inputs = [op.inputs[0]]
    if len(op.inputs) > 1:  # weight (and bias) as tensors
        inputs += op.inputs[1:3]
    else:
        if (
            op.param.table(S.CONV2D["quanParameter"], "quanParameter") is not None
            or op.param.table(S.CONV2D["external"], "external") is not None
        ):
            raise ctx.fail(
                f"op {op.name!r} ({op.type}) holds quantized or external weights; mnn reads float "
                "weights stored in the model (convert without --weightQuantBits / --saveExternalData)"
            )
        w = op.p_floats(S.CONV2D["weight"])
        if w is None or cout <= 0 or w.size % (cout * kh * kw):
            raise ctx.fail(
                f"op {op.name!r} ({op.type}): {0 if w is None else w.size} weights do not fill "
                f"{cout} outputs of {kh}x{kw}"
            )
        b = op.p_floats(S.CONV2D["bias"])
        # Convolution: (out, in/group, kh, kw); Deconvolution: (in, out/group, kh, kw), as ONNX's ConvTranspose
        shape = (-1, cout // group, kh, kw) if deconv else (cout, -1, kh, kw)
        if deconv and (group <= 0 or cout % group):
            raise ctx.fail(f"op {op.name!r} ({op.type}): {cout} outputs in {group} groups")
        inputs.append(ctx.const(w.reshape(shape), op.name + ".weight"))
        if b is not None and b.size:
            if b.size != cout:
                raise ctx.fail(f"op {op.name!r} ({op.type}) has {b.size} biases for {cout} outputs")
            inputs.append(ctx.const(b, op.name + ".bias"))
    attrs = {
        "kernel_shape": [kh, kw],
        "strides": [c["strideY"], c["strideX"]],
        "dilations": [c["dilateY"], c["dilateX"]],
        "group": group,
    }
    if pad_mode in _PAD_MODES:
        attrs["auto_pad"] = _PAD_MODES[pad_mode]
    elif len(pads) == 4:  # [top, left, bottom, right], as ONNX's pads
        attrs["pads"] = pads
    else:
        attrs["pads"] = [c["padY"], c["padX"], c["padY"], c["padX"]]
    outs = op.outputs if not (relu or relu6) else None
    if deconv:
        out_pads = common.ints(S.CONV2D_COMMON["outPads"], f"{op.name}'s outPads")
        if out_pads:
            attrs["output_padding"] = out_pads
    y = ctx.emit("ConvTranspose" if deconv else "Conv", inputs, outs, op.name, **attrs)
    _activation(ctx, y, relu, relu6, op)


def _pool(ctx, op: OpRecord, is_max: bool, is_global: bool, kernel, strides, pads, pad_type, ceil, count) -> None:
    if is_global:
        ctx.emit("GlobalMaxPool" if is_max else "GlobalAveragePool", op.inputs[:1], op.outputs, op.name)
        return
    # the converter leaves out strides ONNX left out: 0 there is ONNX's default of 1
    attrs = {"kernel_shape": kernel, "strides": [s if s > 0 else 1 for s in strides], "ceil_mode": int(ceil)}
    if pad_type in _PAD_MODES:
        attrs["auto_pad"] = _PAD_MODES[pad_type]
    else:
        attrs["pads"] = pads
    if not is_max:
        attrs["count_include_pad"] = int(count == 1)  # AvgPoolCountType INCLUDE_PADDING
    ctx.emit("MaxPool" if is_max else "AveragePool", op.inputs[:1], op.outputs, op.name, **attrs)


@handles("Pooling")
def pooling(ctx, op: OpRecord) -> None:
    f = S.POOL
    pads = op.p_ints(f["pads"])
    py, px = op.p_scalar(f["padY"], "int32"), op.p_scalar(f["padX"], "int32")
    _pool(
        ctx,
        op,
        op.p_scalar(f["type"], "int8") == 0,
        op.p_scalar(f["isGlobal"], "bool", False),
        [op.p_scalar(f["kernelY"], "int32"), op.p_scalar(f["kernelX"], "int32")],
        [op.p_scalar(f["strideY"], "int32"), op.p_scalar(f["strideX"], "int32")],
        pads if len(pads) == 4 else [py, px, py, px],
        op.p_scalar(f["padType"], "int8"),
        op.p_scalar(f["ceilModel"], "bool", True),
        op.p_scalar(f["countType"], "int8"),
    )


@handles("Pooling3D")
def pooling3d(ctx, op: OpRecord) -> None:
    # Pool3D: strides 0, kernels 1, pads 2, type 3, padType 4, isGlobal 5
    kernels, strides, pads = op.p_ints(1), op.p_ints(0), op.p_ints(2)
    is_global = op.p_scalar(5, "bool", False)
    if not is_global and len(pads) == len(kernels):
        pads = pads + pads
    _pool(ctx, op, op.p_scalar(3, "int8") == 0, is_global, kernels, strides, pads, op.p_scalar(4, "int8"), False, 2)


@handles("InnerProduct")
def inner_product(ctx, op: OpRecord) -> None:
    f = S.INNER_PRODUCT
    w, b = op.p_floats(f["weight"]), op.p_floats(f["bias"])
    n = op.p_scalar(f["outputCount"], "int32")
    if w is None or n <= 0 or w.size % n:
        raise ctx.fail(f"op {op.name!r} (InnerProduct): its weights do not fill {n} outputs")
    w = w.reshape(n, -1)
    x = ctx.emit("Flatten", op.inputs[:1], None, op.name + ".flatten", axis=op.p_scalar(f["axis"], "int32", 1) or 1)
    inputs = [x, ctx.const(w.T.copy() if op.p_scalar(f["transpose"], "bool", False) else w, op.name + ".weight")]
    if b is not None and b.size == n:
        inputs.append(ctx.const(b, op.name + ".bias"))
    ctx.emit("Gemm", inputs, op.outputs, op.name, transB=1)


def _swap_last(ctx, x: str, what: str) -> str:
    info = ctx.infos.get(x)
    if info is None or info.shape is None or len(info.shape) < 2:
        raise ctx.fail(f"{what}: a transposed operand of unknown rank")
    perm = list(range(len(info.shape)))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ctx.emit("Transpose", [x], None, what + ".t", perm=perm)


@handles("MatMul", "BatchMatMul")
def matmul(ctx, op: OpRecord) -> None:
    ta, tb = (S.MATMUL["transposeA"], S.MATMUL["transposeB"]) if op.type == "MatMul" else (0, 1)
    a, b = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else ""
    if not b:
        w = op.p_floats(S.MATMUL["weight"])
        if w is None:
            raise ctx.fail(f"op {op.name!r} (MatMul) has one input and no weight")
        raise ctx.fail(f"op {op.name!r} (MatMul) keeps its weight in the op without a shape; not supported")
    if op.p_scalar(ta, "bool", False):
        a = _swap_last(ctx, a, op.name + ".a")
    if op.p_scalar(tb, "bool", False):
        b = _swap_last(ctx, b, op.name + ".b")
    if len(op.inputs) > 2 and op.inputs[2]:
        y = ctx.emit("MatMul", [a, b], None, op.name + ".mm")
        ctx.emit("Add", [y, op.inputs[2]], op.outputs, op.name)
    else:
        ctx.emit("MatMul", [a, b], op.outputs, op.name)


def _channel_shape(ctx, x: str, c: int, what: str) -> tuple:
    info = ctx.infos.get(x)
    rank = len(info.shape) if info is not None and info.shape is not None else 4
    if rank < 2:
        raise ctx.fail(f"{what}: a per-channel op on a tensor of rank {rank}")
    return (c,) + (1,) * (rank - 2)


@handles("BatchNorm")
def batch_norm(ctx, op: OpRecord) -> None:
    f = S.BATCH_NORM
    arrays = [op.p_floats(f[k]) for k in ("slopeData", "biasData", "meanData", "varData")]
    c = op.p_scalar(f["channels"], "int32")
    if any(a is None or a.size != c for a in arrays):
        raise ctx.fail(f"op {op.name!r} (BatchNorm): its statistics are not {c} values each")
    names = [ctx.const(a, f"{op.name}.{k}") for a, k in zip(arrays, ("scale", "bias", "mean", "var"))]
    ctx.emit(
        "BatchNormalization",
        [op.inputs[0]] + names,
        op.outputs,
        op.name,
        epsilon=float(op.p_scalar(f["epsilon"], "float32", 0.001)),
    )


@handles("Scale")
def scale(ctx, op: OpRecord) -> None:
    s, b = op.p_floats(S.SCALE["scaleData"]), op.p_floats(S.SCALE["biasData"])
    if s is None:
        raise ctx.fail(f"op {op.name!r} (Scale) has no scale data")
    shape = _channel_shape(ctx, op.inputs[0], s.size, op.name)
    y = ctx.emit(
        "Mul",
        [op.inputs[0], ctx.const(s.reshape(shape), op.name + ".scale")],
        None if b is not None else op.outputs,
        op.name + ".mul",
    )
    if b is not None:
        ctx.emit("Add", [y, ctx.const(b.reshape(shape), op.name + ".bias")], op.outputs, op.name)


@handles("LayerNorm")
def layer_norm(ctx, op: OpRecord) -> None:
    f = S.LAYER_NORM
    axes = op.p_ints(f["axis"])
    if op.p_scalar(f["group"], "int32", 1) not in (0, 1) or not axes:
        raise ctx.fail(f"op {op.name!r} (LayerNorm): group norm or no axes is not supported")
    info = ctx.infos.get(op.inputs[0])
    if info is None or info.shape is None:
        raise ctx.fail(f"op {op.name!r} (LayerNorm): input of unknown rank")
    rank = len(info.shape)
    norm = sorted(a % rank for a in axes)
    if norm != list(range(norm[0], rank)):
        raise ctx.fail(f"op {op.name!r} (LayerNorm) normalizes axes {axes}, not the trailing ones")
    gamma, beta = op.p_floats(f["gamma"]), op.p_floats(f["beta"])
    shape = info.shape[norm[0] :]
    if gamma is None:
        if not all(isinstance(d, int) for d in shape):
            raise ctx.fail(f"op {op.name!r} (LayerNorm): no gamma and dynamic normalized dims")
        gamma = np.ones(shape, "float32")
    inputs = [op.inputs[0], ctx.const(gamma.reshape(-1) if gamma.ndim else gamma, op.name + ".gamma")]
    if beta is not None:
        inputs.append(ctx.const(beta, op.name + ".beta"))
    ctx.emit(
        "LayerNormalization",
        inputs,
        op.outputs,
        op.name,
        axis=norm[0] - rank,
        epsilon=float(op.p_scalar(f["epsilon"], "float32", 1e-5)),
    )


@handles("ReLU")
def relu(ctx, op: OpRecord) -> None:
    slope = op.p_scalar(0, "float32", 0.0)
    if slope:
        ctx.emit("LeakyRelu", op.inputs[:1], op.outputs, op.name, alpha=float(slope))
    else:
        ctx.emit("Relu", op.inputs[:1], op.outputs, op.name)


@handles("ReLU6")
def relu6(ctx, op: OpRecord) -> None:
    ctx.emit(
        "Clip",
        op.inputs[:1],
        op.outputs,
        op.name,
        min=float(op.p_scalar(S.RELU6["minValue"], "float32", 0.0)),
        max=float(op.p_scalar(S.RELU6["maxValue"], "float32", 6.0)),
    )


@handles("PReLU")
def prelu(ctx, op: OpRecord) -> None:
    slope = op.p_floats(1)
    if slope is None:
        raise ctx.fail(f"op {op.name!r} (PReLU) has no slopes")
    shape = _channel_shape(ctx, op.inputs[0], slope.size, op.name) if slope.size > 1 else (1,)
    ctx.emit("PRelu", [op.inputs[0], ctx.const(slope.reshape(shape), op.name + ".slope")], op.outputs, op.name)


@handles("Softmax")
def softmax(ctx, op: OpRecord) -> None:
    ctx.emit("Softmax", op.inputs[:1], op.outputs, op.name, axis=op.p_scalar(0, "int32", 1))


@handles("Sigmoid", "TanH", "ELU", "Selu")
def simple_activation(ctx, op: OpRecord) -> None:
    if op.type == "ELU":
        ctx.emit("Elu", op.inputs[:1], op.outputs, op.name, alpha=float(op.p_scalar(0, "float32", 1.0)))
    elif op.type == "Selu":
        ctx.emit(
            "Selu",
            op.inputs[:1],
            op.outputs,
            op.name,
            gamma=float(op.p_scalar(0, "float32", 1.0507)),
            alpha=float(op.p_scalar(1, "float32", 1.6733)),
        )
    else:
        ctx.emit({"Sigmoid": "Sigmoid", "TanH": "Tanh"}[op.type], op.inputs[:1], op.outputs, op.name)


@handles("Interp")
def interp(ctx, op: OpRecord) -> None:
    f = S.INTERP
    mode = {1: "nearest", 2: "linear", 3: "cubic"}.get(op.p_scalar(f["resizeType"], "int32", 1))
    if mode is None:
        raise ctx.fail(f"op {op.name!r} (Interp) has resize type {op.p_scalar(f['resizeType'], 'int32')}")
    ctm = {1: "align_corners", 2: "half_pixel", 3: "pytorch_half_pixel", 4: "asymmetric"}.get(
        op.p_scalar(f["ctm"], "int8", 0)
    )
    if ctm is None:
        ctm = (
            "align_corners"
            if op.p_scalar(f["alignCorners"], "bool", False)
            else "half_pixel"
            if op.p_scalar(f["halfPixelCenters"], "bool", False)
            else "asymmetric"
        )
    attrs = {
        "mode": mode,
        "coordinate_transformation_mode": ctm,
        "axes": [2, 3],
        "cubic_coeff_a": float(op.p_scalar(f["cubicCoeffA"], "float32", -0.75)),
    }
    if mode == "nearest":
        attrs["nearest_mode"] = "round_prefer_ceil" if ctm == "align_corners" else "floor"
    if len(op.inputs) > 1 and op.inputs[1]:
        v = ctx.value(op.inputs[1], f"op {op.name!r} (Interp)'s output size")
        v = v.reshape(-1)[-2:]
        if v.dtype.kind == "f":
            attrs["scales"] = [float(s) for s in v]
        else:
            attrs["sizes"] = [int(s) for s in v]
    else:
        oh, ow = op.p_scalar(f["outputHeight"], "int32"), op.p_scalar(f["outputWidth"], "int32")
        if oh > 0 and ow > 0:
            attrs["sizes"] = [oh, ow]
        else:  # MNN's scales are input/output ratios
            hs, ws = op.p_scalar(f["heightScale"], "float32", 0.0), op.p_scalar(f["widthScale"], "float32", 0.0)
            if hs <= 0 or ws <= 0:
                raise ctx.fail(f"op {op.name!r} (Interp) has neither an output size nor scales")
            attrs["scales"] = [1.0 / hs, 1.0 / ws]
    ctx.emit("Resize", op.inputs[:1], op.outputs, op.name, **attrs)

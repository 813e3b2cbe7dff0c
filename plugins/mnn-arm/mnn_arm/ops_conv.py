"""Conv (fp32 or fp16 path: depthwise kernel, or im2col / 1x1 into packed
panels + packed GEMM with bias and activation in its epilogue) and the int8
convolutions QLinearConv and ConvInteger (int8 or sdot path, bit-exact with
the reference's ONNX semantics). 3x3 stride-1 convolutions on the fp32 and
fp16 paths use Winograd F(2x2, 3x3) where it is cheaper (csrc/winograd.c,
csrc/winograd_fp16.c; option "arm.winograd" / MNN_ARM_WINOGRAD: auto, on, off)."""

from __future__ import annotations

import numpy as np

from mnn_core.backend.kit.geometry import conv_geometry
from mnn_core.backend.kit.window import conv_params
from mnn_core.ops.quant import requant_multiplier

from . import _arm, half, paths
from ._common import fused_activation, kernel, static_shape


def _geometry(x_shape, w_shape, attrs) -> dict:
    """The kit's conv fields, with C the input's channels where the convolution is depthwise (the
    depthwise kernel walks every channel, not one group's)."""
    p = conv_params(x_shape, w_shape, conv_geometry(x_shape, w_shape, attrs))
    c = x_shape[1]
    depthwise = p["group"] == c and p["O"] == c
    p["depthwise"] = int(depthwise)
    if depthwise:
        p["C"] = c
    return p


def _conv_supports(node, ins):
    if len(ins[0].shape) not in (3, 4, 5) or len(ins[1].shape) != len(ins[0].shape):
        return "1-D, 2-D or 3-D convolution (input and weight of rank 3, 4 or 5)"
    return True


def _as_2d(x_shape, w_shape, attrs) -> tuple:
    """A 1-D convolution as the 2-D one over a height of 1 (the same memory): shapes and attributes."""
    a = dict(attrs)
    for key, one in (("strides", 1), ("dilations", 1), ("kernel_shape", 1)):
        if a.get(key):
            a[key] = [one, *a[key]]
    if a.get("pads"):
        a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    return (x_shape[0], x_shape[1], 1, x_shape[2]), (w_shape[0], w_shape[1], 1, w_shape[2]), a


def _by_windows(p, path, has_bias, bias, ctx) -> bool:
    """A convolution over one row of one channel whose windows lie inside it (no padding, no dilation) and
    that has few output columns for its filters, as an STFT's frames (257 filters of 512 taps at a hop of 160,
    8 frames): its windows, rows of the input read in place, times the filters transposed fill the fp32 tile
    (8 frames x 12 filters) where the im2col GEMM's 8-column tiles of filters x frames run a third empty."""
    from .ops_matmul import _tile_cost

    if path != "fp32" or half.half_activations(ctx) or (has_bias and bias is None):
        return False
    if p["group"] != 1 or p["depthwise"] or p["C"] != 1 or p["H"] != 1 or p["kh"] != 1 or p["OH"] != 1:
        return False
    if p["dw"] != 1 or p["pl"] != 0 or (p["OW"] - 1) * p["sw"] + p["kw"] > p["W"]:
        return False
    return _tile_cost(p["OW"], p["O"]) < 0.95 * _tile_cost(p["O"], p["OW"])


def _windows_matmul(p, weight, bias):
    """_by_windows' convolution: A = the OW windows (row stride sw over the input), B = the O x kw filters
    transposed, y = C^T (filters x frames) per image."""
    o, kw = p["O"], p["kw"]
    mp = dict(M=p["OW"], N=o, K=kw, batch=p["N"], a_rs=p["sw"], a_cs=1, b_rs=1, b_cs=kw, a_bs=p["W"])
    mp.update(bias_rs=0, bias_cs=1, alpha=1.0, beta=1.0, act=p["act"], act_alpha=p["act_alpha"], act_beta=p["act_beta"])
    w2 = np.ascontiguousarray(np.asarray(weight, np.float32).reshape(o, kw))
    return _arm.matmul("fp32", "arm.Conv.windows", mp, w2, bias, -1, False, True)


def _prepare_conv3d(node, ins, outs, weight, bias, has_bias, ctx):
    x, w = static_shape(ins[0]), static_shape(ins[1])
    geo = conv_geometry(x, w, node.attrs, (3,))
    p = dict(N=x[0], O=w[0], group=geo["group"], C=w[1], D=x[2], H=x[3], W=x[4])
    p.update(zip(("OD", "OH", "OW"), geo["out"][2:]))
    p.update(zip(("kd", "kh", "kw"), w[2:]))
    p.update(zip(("sd", "sh", "sw"), geo["strides"]))
    p.update(zip(("dd", "dh", "dw"), geo["dilations"]))
    p.update(zip(("pd", "pt", "pl"), geo["pads"][:3]))
    p["act"], p["act_alpha"], p["act_beta"] = fused_activation(node.attrs)
    threads = max(1, int(getattr(ctx, "threads", 1) or 1))
    path = paths.float_path(ctx.precision, ctx.options)
    if not half.half_activations(ctx):
        return _arm.conv3d(path, p, weight, bias, 2 if has_bias else -1, threads)
    if bias is None and has_bias:  # a bias arriving at run would be fp16: the fp32-io kernel, widened
        return half.widen(_arm.conv3d(path, p, weight, None, 2, threads), ins, outs)
    return _arm.conv3d("fp16h", p, weight, bias, -1, threads)


#: auto: Winograd from this many input and output channels and output rows and columns on. Instruction
#: counts (tools/count_insns.py, paths fp32_im2col / fp32_winograd) put it ahead from 3x3 outputs and any
#: channel count (3x3 planes 0.78-0.86x, 4x4 0.62x, 56x56 0.38x; 2x2 and 1x1 planes 1.4-1.8x: one tile
#: of 16 one-column GEMMs). Three-channel inputs are left to im2col: their K = 3 GEMMs would be all loads
#: and no reuse on a real core, which the counts cannot show.
WINO_MIN_CHANNELS = 4
WINO_MIN_SIDE = 3


def _winograd(p: dict, path: str, options) -> bool:
    """F(2x2, 3x3) on the float paths for 3x3 stride-1 dilation-1 ungrouped convolutions (not depthwise)."""
    applies = (
        path in ("fp32", "fp16")
        and p["group"] == 1
        and not p["depthwise"]
        and (p["kh"], p["kw"]) == (3, 3)
        and (p["sh"], p["sw"], p["dh"], p["dw"]) == (1, 1, 1, 1)
    )
    setting = paths.winograd_setting(options)
    if not applies or setting == "off":
        return False
    if setting == "on":
        return True
    return min(p["C"], p["O"]) >= WINO_MIN_CHANNELS and min(p["OH"], p["OW"]) >= WINO_MIN_SIDE


@kernel("Conv", half_native=True, supports=_conv_supports, efficiency=0.6)
def prepare_conv(node, ins, outs, constants, ctx):
    weight = constants.get(node.inputs[1])
    if weight is None:
        from mnn_core.errors import BackendError

        raise BackendError("arm Conv needs constant weights (they are packed once at prepare)")
    has_bias = len(node.inputs) > 2 and bool(node.inputs[2])
    bias = constants.get(node.inputs[2]) if has_bias else None
    x_shape, w_shape, attrs = static_shape(ins[0]), static_shape(ins[1]), node.attrs
    if len(x_shape) == 5:
        return _prepare_conv3d(node, ins, outs, weight, bias, has_bias, ctx)
    if len(x_shape) == 3:
        x_shape, w_shape, attrs = _as_2d(x_shape, w_shape, attrs)
        weight = np.asarray(weight).reshape(w_shape)
    p = _geometry(x_shape, w_shape, attrs)
    p["act"], p["act_alpha"], p["act_beta"] = fused_activation(node.attrs)
    p["threads"] = max(1, int(getattr(ctx, "threads", 1) or 1))  # scratch per thread
    path = paths.float_path(ctx.precision, ctx.options)
    if _by_windows(p, path, has_bias, bias, ctx):
        return _windows_matmul(p, weight, bias)
    p["winograd"] = int(_winograd(p, path, ctx.options))
    if not half.half_activations(ctx):
        return _arm.conv(path, p, weight, bias, 2 if has_bias else -1)
    if bias is None and has_bias:  # a bias arriving at run would be fp16: the fp32-io kernel, widened
        return half.widen(_arm.conv(path, p, weight, None, 2), ins, outs)
    return _arm.conv("fp16h", p, weight, bias, -1)


def _qconv_supports(node, ins):
    if len(ins[0].shape) != 4 or len(ins[3].shape) != 4:
        return "only 2-D convolution (NCHW input, OIHW weight)"
    if ins[2].dtype != ins[0].dtype or ins[5].dtype != ins[3].dtype:
        return "zero points must have the dtype of their data"
    for i, what in ((1, "x_scale"), (2, "x_zero_point"), (6, "y_scale"), (7, "y_zero_point")):
        if int(np.prod(ins[i].shape)) != 1:
            return f"{what} must be one value"
    return True


def _scalar(constants, name, what):
    value = constants.get(name)
    if value is None:
        from mnn_core.errors import UnsupportedOpError

        # declined like an unsupported op: weights and quantization parameters are packed once, at prepare
        raise UnsupportedOpError(f"arm int8 conv needs a constant {what} (a graph input was given)")
    return np.asarray(value)


@kernel(
    "QLinearConv",
    half_native=True,
    dtypes=("uint8", "int8", "float32", "int32"),
    supports=_qconv_supports,
    efficiency=0.8,
)
def prepare_qlinear_conv(node, ins, outs, constants, ctx):
    names = node.inputs
    x_dtype, w_dtype = ins[0].dtype, ins[3].dtype
    sx, zx = _scalar(constants, names[1], "x_scale"), _scalar(constants, names[2], "x_zero_point")
    w = _scalar(constants, names[3], "weight")
    sw, zw = _scalar(constants, names[4], "w_scale"), _scalar(constants, names[5], "w_zero_point")
    sy, zy = _scalar(constants, names[6], "y_scale"), _scalar(constants, names[7], "y_zero_point")
    has_bias = len(names) > 8 and bool(names[8])
    bias = constants.get(names[8]) if has_bias else None
    p = _geometry(static_shape(ins[0]), w.shape, node.attrs)
    p["threads"] = max(1, int(getattr(ctx, "threads", 1) or 1))  # scratch per thread
    o = w.shape[0]
    # the reference's multiplier (float32(float32(sx * sw) / sy), mnn_core/ops/quant.py), exact in float64
    mult = np.broadcast_to(requant_multiplier(sx.reshape(()), sw.ravel(), sy.reshape(())), (o,)).astype(np.float64)
    out_kind = 1 if outs[0].dtype == "uint8" else 2
    if _one_pixel_images(p) and (bias is not None or not has_bias):
        return _tokens_as_rows(p, w, x_dtype, w_dtype, zx, zw, mult, zy, out_kind, bias)
    return _arm.qconv(
        paths.int8_path(),
        p,
        w,
        int(x_dtype == "uint8"),
        int(w_dtype == "uint8"),
        int(zx.reshape(())),
        np.broadcast_to(zw.astype(np.int64).ravel(), (o,)),
        mult,
        float(zy.astype(np.float64).reshape(())),
        out_kind,
        bias,
        8 if has_bias else -1,
    )


def _one_pixel_images(p: dict) -> bool:
    """A 1x1 convolution of 1x1 images, ungrouped (quant.quantize's Linear on [N, K] tokens as [N, K, 1, 1])."""
    one = p["H"] == p["W"] == p["OH"] == p["OW"] == p["kh"] == p["kw"] == 1
    return one and p["group"] == 1 and not (p["pt"] or p["pl"])


def _tokens_as_rows(p, w, x_dtype, w_dtype, zx, zw, mult, zy, out_kind, bias):
    """That convolution as one QLinearMatMul: the N images are the rows of A [N, C], the weight B = W^T with
    its zero points, multipliers and bias per column. As N images it is N matrix-vector products of one
    column each (2.3 instructions a multiply-add on ConvNeXt's Linears); as rows, the 8x12 tile's GEMM.
    Same integer sums and the same requantization rule: the same bytes."""
    o = w.shape[0]
    return _arm.qmatmul(
        paths.int8_path(),
        p["N"],
        p["C"],
        o,
        int(x_dtype == "uint8"),
        int(zx.reshape(())),
        np.ascontiguousarray(w.reshape(o, -1).T),
        int(w_dtype == "uint8"),
        np.broadcast_to(zw.astype(np.int64).ravel(), (o,)),
        mult,
        int(zy.reshape(())),
        out_kind,
        name="arm.QLinearConv (1x1 images as rows)",
        bias_col=None if bias is None else np.asarray(bias).astype(np.int32),
    )


def _conv_integer_supports(node, ins):
    if len(ins[0].shape) != 4 or len(ins[1].shape) != 4:
        return "only 2-D convolution (NCHW input, OIHW weight)"
    if len(ins) > 2 and ins[2] is not None and int(np.prod(ins[2].shape)) != 1:
        return "x_zero_point must be one value"
    return True


@kernel("ConvInteger", half_native=True, dtypes=("uint8", "int8"), supports=_conv_integer_supports, efficiency=0.8)
def prepare_conv_integer(node, ins, outs, constants, ctx):
    names = node.inputs
    w = _scalar(constants, names[1], "weight")
    o = w.shape[0]
    zx_runtime = len(names) > 2 and bool(names[2]) and constants.get(names[2]) is None  # read at run
    zx = _scalar(constants, names[2], "x_zero_point") if len(names) > 2 and names[2] and not zx_runtime else 0
    zw = _scalar(constants, names[3], "w_zero_point") if len(names) > 3 and names[3] else np.int64(0)
    p = _geometry(static_shape(ins[0]), w.shape, node.attrs)
    p["threads"] = max(1, int(getattr(ctx, "threads", 1) or 1))
    return _arm.qconv(
        paths.int8_path(),
        p,
        w,
        int(ins[0].dtype == "uint8"),
        int(w.dtype == np.uint8),
        int(np.asarray(zx).reshape(())),
        np.broadcast_to(np.asarray(zw, np.int64).ravel(), (o,)),
        np.ones(o),
        0.0,
        0,
        None,
        -1,
        2 if zx_runtime else -1,
    )

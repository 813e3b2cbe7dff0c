"""Conv: direct convolution with groups, strides, dilations and pads, a 1x1
GEMM-like kernel and a per-channel kernel for depthwise and odd groupings,
bias and activation fused (kernels/conv.cl).

Weights are packed on the device ([O/4][Cg][KH][KW][4], in the compute type)
from their arena copy: once at resize when they are constants, before every
run when they are a runtime input. Where the output alone gives a GPU too few
work-items, the input channels are split into slices whose partial sums a
second kernel adds up (see Runtime.split_target)."""

from __future__ import annotations

import os

import numpy as np

from mnn_core.backend.kit.codes import BINARY as BINARY_CODES
from mnn_core.backend.kit.geometry import conv_geometry
from mnn_core.ops import get_schema

from . import blocks8
from ._cl import LocalMem
from ._common import full_attrs, fused_activation, kernel, numel

#: a Conv, the Add of a residual of its output's shape that alone reads it, and the activation that
#: alone reads the sum, run as one (fuse.py)
FUSED_CONV = "opencl.FusedConv"


def _supports(node, ins):
    if len(ins[0].shape) != 4 or len(ins[1].shape) != 4:
        return "2-D convolution (NCHW input, OIHW weight) only"
    return True


MAX_SLICES = 16
MIN_SLICE_CHANNELS = 8
#: depthwise convolutions of these window sizes on kernels/dwconv.cl (env MNN_OPENCL_DWCONV): "auto" (the
#: default) on a GPU, "tile" on any device, "off": conv2d_c1
CONV4_PW_OPTION = "opencl.conv4_pw"  # "on": conv4's 1x1s (stride 1, no padding) read the input without the table
DWCONV_OPTION = "opencl.dwconv"
DWCONV_ENV = "MNN_OPENCL_DWCONV"
DWCONV_SIZES = (3, 5, 7)
DWCONV_LWS = 256
DWCONV_MAX_LOCAL = 32768  # bytes of a staged plane: past that, too few work-groups fit a GPU's core


def _slices(b, items: int, channels: int) -> int:
    """Input-channel slices so that items * slices reaches the device's target."""
    target = b.runtime.split_target()
    if not target or items >= target:
        return 1
    return max(1, min(-(-target // items), channels // MIN_SLICE_CHANNELS, MAX_SLICES))


def _epilogue(b, s: int, y, bias_arg, o: int, plane: int, act) -> list:
    """The (S, partial buffer, offset) arguments, and the reduce launch when split."""
    if s == 1:
        return [1, b.tensor(y)]
    total = numel(y.info.shape)
    part = b.scratch(s * total * 4)
    no_res = [b.tensor(y), 0]
    b.pending.append(("splitk_reduce", [part, s, total, *bias_arg, o, plane, b.tensor(y), *no_res, *act], (total,)))
    return [s, part]


def _k_table(c: int, h: int, w: int, kh: int, kw: int, dh: int, dw: int) -> np.ndarray:
    """conv8's gather table: per k = (c, i, j) in OIHW order, (input offset, row shift, column shift)
    as int32 quadruples (the fourth unused, for vload4)."""
    ci, ii, jj = np.meshgrid(np.arange(c), np.arange(kh) * dh, np.arange(kw) * dw, indexing="ij")
    table = np.zeros((c * kh * kw, 4), np.int32)
    table[:, 0] = (ci * h * w + ii * w + jj).reshape(-1)
    table[:, 1] = ii.reshape(-1)
    table[:, 2] = jj.reshape(-1)
    return table


def _conv8(b, choice, x, w, bias_arg, y, geo, act, res=None) -> None:
    """A one-group convolution as an implicit GEMM on 8x8 register blocks (kernels/gemm8.cl), or
    4x4 tiles (kernels/conv4.cl) where `choice` names one of blocks8.CONV4_BLOCKS,
    K split into `choice[1]` slices that splitk_reduce adds up. The residual `res` (y's shape) is
    added before the activation, by the GEMM's store or the reduce."""
    name, slices = choice
    n, c, h, wd = x.info.shape
    o, _, kh, kw = w.info.shape
    _, _, oh, ow = geo["out"]
    (pt, pl, _, _), (sh, sw), (dh, dw) = geo["pads"], geo["strides"], geo["dilations"]
    m, cols, k = o, n * oh * ow, c * kh * kw
    ks = -(-k // slices)
    if slices > 1:  # whole staged steps of 16 k
        ks = -(-ks // 16) * 16
    slices = -(-k // ks)  # no empty slice: each one writes its whole part
    small = name in blocks8.CONV4_BLOCKS
    (tx, ty, _), (bm, bn) = (blocks8.CONV4_BLOCKS if small else blocks8.BLOCKS)[name]
    table = b.upload(_k_table(c, h, wd, kh, kw, dh, dw))
    kernel_name = f"conv4_{name}" if small else f"conv8_{name}"
    pointwise = kh == kw == 1 and (sh, sw) == (1, 1) and tuple(geo["pads"]) == (0, 0, 0, 0)
    if small and pointwise and str(b.options.get(CONV4_PW_OPTION, "off")).lower() == "on":
        kernel_name = f"conv4p_{name}"
    res_arg = [b.tensor(res), 1] if res is not None and slices == 1 else [b.tensor(y), 0]
    if slices > 1:
        part = b.scratch(slices * m * cols * 4)
        out, out_bias, out_act = part, [b.tensor(y), 0], [0, 0.0, 0.0]
    else:
        out, out_bias, out_act = b.tensor(y), bias_arg, act
    geometry = [m, cols, k, c, h, wd, oh, ow, sh, sw, pt, pl, ks]
    b.launch(
        kernel_name,
        [b.tensor(x), b.tensor(w), table, *out_bias, out, *res_arg, *geometry, *out_act],
        (-(-cols // bn) * tx, -(-m // bm) * ty, slices),
        (tx, ty, 1),
        tunable=False,
    )
    if slices > 1:
        res_arg = [b.tensor(res), 1] if res is not None else [b.tensor(y), 0]
        args = [part, slices, m * cols, *bias_arg, o, oh * ow, b.tensor(y), *res_arg, *act]
        b.launch("splitk_reduce", args, (m * cols,))


def _dwconv(b, x, w, bias_arg, y, geo, act) -> bool:
    """A depthwise K x K convolution (K in DWCONV_SIZES, stride 1, no dilation) on kernels/dwconv.cl,
    its input plane staged in local memory, where DWCONV_OPTION asks and the plane fits; returns
    whether it was launched."""
    wanted = str(b.options.get(DWCONV_OPTION, os.environ.get(DWCONV_ENV, "auto")) or "auto").lower()
    if wanted not in ("auto", "off", "tile"):
        raise ValueError(f"{DWCONV_OPTION} must be auto, off or tile, got {wanted!r}")
    if wanted == "auto":
        wanted = "tile" if b.runtime.is_gpu else "off"
    n, c, h, wd = x.info.shape
    _, _, kh, kw = w.info.shape
    _, _, oh, ow = geo["out"]
    if wanted == "off" or kh != kw or kh not in DWCONV_SIZES or tuple(geo["strides"]) != (1, 1):
        return False
    if tuple(geo["dilations"]) != (1, 1):
        return False
    tw, th = ow + kw - 1, 4 * -(-oh // 4) + kh - 1
    if tw * th * 4 > min(DWCONV_MAX_LOCAL, int(b.runtime.entry.device.get("local_mem", 0)) - 1024):
        return False
    pt, pl = geo["pads"][0], geo["pads"][1]
    lws = min(DWCONV_LWS, 32 * -(-(ow * -(-oh // 4)) // 32))
    b.launch(
        f"dwconv{kh}",
        [b.tensor(x), b.tensor(w), *bias_arg, b.tensor(y), c, h, wd, oh, ow, pt, pl, LocalMem(tw * th * 4), tw, th]
        + list(act),
        (lws, n * c),
        (lws, 1),
        tunable=False,
    )
    return True


def _pack(b, w_ref, o: int, ck: int, constant: bool):
    """Pack weights to [ceil(O/4)][Cg*KH*KW][4]; returns the packed tensor."""
    ob = -(-o // 4)
    total = ob * ck * 4
    itemsize = 2 if b.precision == "float16" else 4
    packed = b.scratch(total * itemsize)
    b.launch("pack_oc4", [b.tensor(w_ref), packed, o, ck, total], (total,), once=constant, tunable=False)
    return packed


@kernel("Conv", supports=_supports)
def _build_conv(op, b):
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    _conv(op, b, full_attrs(op.node), op.inputs[0], op.inputs[1], bias, op.outputs[0])


@kernel(FUSED_CONV)
def _build_fused_conv(op, b):
    """opencl.FusedConv (fuse.py): inputs X, W, the residual, then the bias if attrs["has_bias"];
    the Conv's attributes and the activation after the Add."""
    conv_attrs = {k: v for k, v in op.node.attrs.items() if k != "has_bias"}
    attrs = get_schema("Conv").check_attrs(conv_attrs, op.node.name)
    bias = op.inputs[3] if op.node.attrs.get("has_bias") else None
    _conv(op, b, attrs, op.inputs[0], op.inputs[1], bias, op.outputs[0], res=op.inputs[2])


def _add_residual(b, y, res, act) -> None:
    """y = act(y + res), in place, where the convolution's kernel did not add the residual."""
    n = numel(y.info.shape)
    b.launch("binary_same", [b.tensor(y), b.tensor(res), b.tensor(y), n, BINARY_CODES["Add"]], (n,))
    if act[0] != 0:
        b.launch("unary", [b.tensor(y), b.tensor(y), n, *act], (n,))


def _conv(op, b, attrs, x, w, bias, y, res=None):
    """y = act(conv(x, w) + bias [+ res]): attrs are the Conv's (its activation after the residual)."""
    geo = conv_geometry(x.info.shape, w.info.shape, attrs)
    n, c, h, wd = x.info.shape
    o, cg, kh, kw = w.info.shape
    _, _, oh, ow = geo["out"]
    if numel(y.info.shape) == 0:
        return
    group = geo["group"]
    og = o // group
    act = fused_activation(attrs)
    bias_arg = [b.tensor(bias), 1] if bias is not None else [b.tensor(y), 0]  # any valid buffer when absent
    (pt, pl, _, _), (sh, sw), (dh, dw) = geo["pads"], geo["strides"], geo["dilations"]
    constant_w = w.name in op.constants
    choice = blocks8.conv_choice(b, o, n * oh * ow, c * kh * kw, kh * kw > 1) if group == 1 else None
    if choice is not None:
        _conv8(b, choice, x, w, bias_arg, y, geo, act, res)
        return
    if res is not None:  # conv.cl's kernels store y; then the residual and the activation
        _conv(op, b, {**attrs, "activation": "none"}, x, w, bias, y)
        _add_residual(b, y, res, act)
        return
    if group == c == o and _dwconv(b, x, w, bias_arg, y, geo, act):
        return
    if group > 1 and og % 4:
        b.launch(
            "conv2d_c1",
            [
                b.tensor(x),
                b.tensor(w),
                *bias_arg,
                b.tensor(y),
                n,
                c,
                h,
                wd,
                o,
                oh,
                ow,
                cg,
                og,
                kh,
                kw,
                sh,
                sw,
                pt,
                pl,
                dh,
                dw,
                *act,
            ],
            (-(-ow // 4), oh, n * o),
        )
        return
    ob = -(-o // 4)
    packed = _pack(b, w, o, cg * kh * kw, constant_w)
    if kh == kw == 1 and (sh, sw) == (1, 1) and geo["pads"] == [0, 0, 0, 0] and group == 1:
        grid = (-(-(h * wd) // 4), ob, n)
        s = _slices(b, numel(grid), c)
        split = _epilogue(b, s, y, bias_arg, o, oh * ow, act)
        b.launch(
            "conv1x1_oc4",
            [b.tensor(x), packed, *bias_arg, b.tensor(y), n, c, h * wd, o, ob, *act, *split],
            grid[:2] + (n * s,),
        )
    else:
        grid = (-(-ow // 4), oh, n * ob)
        s = _slices(b, numel(grid), cg)
        split = _epilogue(b, s, y, bias_arg, o, oh * ow, act)
        b.launch(
            "conv2d_oc4",
            [
                b.tensor(x),
                packed,
                *bias_arg,
                b.tensor(y),
                n,
                c,
                h,
                wd,
                o,
                oh,
                ow,
                cg,
                og,
                ob,
                kh,
                kw,
                sh,
                sw,
                pt,
                pl,
                dh,
                dw,
                *act,
                *split,
            ],
            grid[:2] + (n * ob * s,),
        )
    for name, args, gws in b.pending:  # after the partial sums
        b.launch(name, args, gws)
    b.pending.clear()

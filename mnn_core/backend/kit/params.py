"""Parameter blocks of the shared compute shaders (push constants on Vulkan, a
parameter buffer on Metal): the bytes each shader reads, built from an op's
shapes and attributes. The layouts are the shaders' own: change both together."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .codes import PAD_MODES, REDUCE, activation_code
from .geometry import conv_geometry, pool_geometry
from .layout import broadcast_plan, collapse, contiguous_strides, numel, pad6, pad_to, reduce_plan

if TYPE_CHECKING:
    from ...graph.ir import Node, TensorInfo
    from ..api import SegmentOp


def pack(*values: int | float | Sequence[int | float]) -> bytes:
    """Ints as 32-bit (signed when negative), floats as fp32, lists flattened."""
    flat = []
    for v in values:
        flat.extend(v) if isinstance(v, (list, tuple)) else flat.append(v)
    fmt = "".join("f" if isinstance(v, float) else ("i" if v < 0 else "I") for v in flat)
    return struct.pack("<" + fmt, *flat)


def binary_params(
    code: int,
    out_shape: Sequence[int],
    a_shape: Sequence[int],
    b_shape: Sequence[int],
    act: tuple[int, float, float] = (0, 0.0, 0.0),
) -> bytes:
    """binary.comp's parameters: operation `code` (codes.BINARY) of broadcast float
    operands, with the fused activation `act` (code, alpha, beta) applied to the result."""
    dims, (sa, sb) = broadcast_plan(out_shape, a_shape, b_shape)
    return pack(numel(out_shape), len(dims), code, act[0], pad6(dims, 1), pad6(sa), pad6(sb), *act[1:])


# -- GEMM (gemm.comp) -----------------------------------------------------------------------


def gemm_params(
    m: int,
    n: int,
    k: int,
    nb2: int,
    a_st: Sequence[int],
    b_st: Sequence[int],
    c_st: Sequence[int],
    bias_st: Sequence[int] | None,
    alpha: float,
    beta: float,
    act: int,
    aa: float,
    ab: float,
) -> bytes:
    """C = act(alpha * A @ B + beta * bias) over a (nb1, nb2) batch: each operand's
    (row, column, batch1, batch2) element strides; bias_st None when there is no bias."""
    has_bias = int(bias_st is not None)
    return pack(
        m, n, k, nb2, *a_st, *b_st, *c_st, has_bias, act, *(bias_st or (0, 0, 0, 0)), float(alpha), float(beta), aa, ab
    )


def gemm_operands(
    attrs: dict, a_shape: Sequence[int], c_shape: Sequence[int] | None, out_shape: Sequence[int]
) -> tuple[int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    """Gemm's (m, n, k, A strides, B strides, bias strides or None) from transA/transB
    and C's broadcast (c_shape None: no C)."""
    m, n = out_shape
    k = a_shape[0] if attrs["transA"] else a_shape[1]
    a_st = (1, m, 0, 0) if attrs["transA"] else (k, 1, 0, 0)
    b_st = (1, k, 0, 0) if attrs["transB"] else (n, 1, 0, 0)
    bias_st = None
    if c_shape is not None:
        cm, cn = ((1, 1) + tuple(c_shape))[-2:]
        bias_st = (cn if cm != 1 else 0, 1 if cn != 1 else 0, 0, 0)
    return m, n, k, a_st, b_st, bias_st


def gemm_fields(
    attrs: dict, a_shape: Sequence[int], c_shape: Sequence[int] | None, out_shape: Sequence[int]
) -> dict[str, int | float]:
    """A Gemm's parameters as the CPU backends' C structs name them (mnn-x86, mnn-arm): sizes, the
    row and column strides of A, B and the bias (0 along a broadcast C's axes; c_shape None: no C),
    alpha, beta and the fused activation."""
    m, n, k, a_st, b_st, bias_st = gemm_operands(attrs, a_shape, c_shape, out_shape)
    act, act_alpha, act_beta = activation_code(attrs)
    bias_rs, bias_cs = bias_st[:2] if bias_st is not None else (0, 0)
    return dict(
        M=m,
        N=n,
        K=k,
        batch=1,
        a_rs=a_st[0],
        a_cs=a_st[1],
        b_rs=b_st[0],
        b_cs=b_st[1],
        bias_rs=bias_rs,
        bias_cs=bias_cs,
        alpha=attrs["alpha"],
        beta=attrs["beta"],
        act=act,
        act_alpha=act_alpha,
        act_beta=act_beta,
    )


def matmul_fields(m: int, n: int, k: int, batch: int, attrs: dict) -> dict[str, int | float]:
    """A row-major MatMul (no bias, `batch` matrices) in gemm_fields' form, with its fused activation."""
    act, act_alpha, act_beta = activation_code(attrs)
    return dict(
        M=m,
        N=n,
        K=k,
        batch=batch,
        a_rs=k,
        a_cs=1,
        b_rs=n,
        b_cs=1,
        bias_rs=0,
        bias_cs=0,
        alpha=1.0,
        beta=1.0,
        act=act,
        act_alpha=act_alpha,
        act_beta=act_beta,
    )


def gemm_args(op: SegmentOp) -> tuple:
    """A Gemm SegmentOp as gemm.comp's (m, n, k, nb1, nb2, A strides, B strides, C batch
    strides, bias strides or None, alpha, beta, act, act_alpha, act_beta): see gemm_params."""
    attrs = op.node.attrs
    a, y = op.inputs[0], op.outputs[0]
    c = op.inputs[2] if len(op.inputs) > 2 else None
    c_shape = c.info.shape if c is not None else None
    m, n, k, a_st, b_st, bias_st = gemm_operands(attrs, a.info.shape, c_shape, y.info.shape)
    act, aa, ab = activation_code(attrs)
    return m, n, k, 1, 1, a_st, b_st, (0, 0), bias_st, attrs["alpha"], attrs["beta"], act, aa, ab


def matmul_plan(a_shape: Sequence[int], b_shape: Sequence[int]) -> tuple:
    """MatMul's (M, N, K, batch dims, and the batch strides of A, B and Y in elements) with numpy's
    rules (a 1-D operand as a row or column, broadcast batch dims), the batch dims collapsed."""
    a2 = (1,) + tuple(a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if len(b_shape) == 1 else tuple(b_shape)
    m, k, n = a2[-2], a2[-1], b2[-1]
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    strides = []
    for shape, unit in ((a2[:-2], m * k), (b2[:-2], k * n), (batch, m * n)):
        padded = (1,) * (len(batch) - len(shape)) + tuple(shape)
        cs = contiguous_strides(padded)
        strides.append([0 if d == 1 and o != 1 else s * unit for d, o, s in zip(padded, batch, cs)])
    dims, (sa, sb, sc) = collapse(batch, *strides)
    return m, n, k, dims, sa, sb, sc


def matmul_args(op: SegmentOp) -> tuple:
    """A MatMul SegmentOp as gemm.comp's arguments, in gemm_args's order; its batch (at most two
    dims once collapsed: see matmul_plan) as (nb1, nb2), padded with size-1 dims."""
    a, b = op.inputs
    m, n, k, dims, sa, sb, sc = matmul_plan(a.info.shape, b.info.shape)
    if len(dims) > 2:
        raise ValueError(f"MatMul batch of {len(dims)} dims after collapsing (max 2)")
    pad = 2 - len(dims)
    (nb1, nb2), sa, sb, sc = [1] * pad + list(dims), [0] * pad + sa, [0] * pad + sb, [0] * pad + sc
    act, aa, ab = activation_code(op.node.attrs)
    return m, n, k, nb1, nb2, (k, 1, sa[0], sa[1]), (n, 1, sb[0], sb[1]), (sc[0], sc[1]), None, 1.0, 0.0, act, aa, ab


def pointwise_params(n: int, c: int, hw: int, o: int, g: int, has_bias: int, act: int, a: float, b: float) -> bytes:
    """A 1x1 convolution as gemm.comp: Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g]
    (cg x HW), one GEMM per (image, group), bias per output channel."""
    og, cg = o // g, c // g
    return pack(
        *(og, hw, cg, g),
        *(cg, 1, 0, og * cg),  # A = W: rows m, columns k; batch (image, group)
        *(hw, 1, c * hw, cg * hw),  # B = X
        *(o * hw, og * hw, has_bias, act),  # C = Y
        *(1, 0, 0, og),  # bias per output channel
        *(1.0, 1.0, a, b),
    )


# -- convolution (conv_dw.comp, conv2d.comp) ---------------------------------------------------


@dataclass(frozen=True)
class ConvPlan:
    """A 2-D Conv SegmentOp's sizes, geometry and fused activation, as the conv shaders take them."""

    n: int
    c: int
    h: int
    w: int
    o: int
    cg: int
    kh: int
    kw: int
    oh: int
    ow: int
    g: int
    pads: tuple
    sh: int
    sw: int
    dh: int
    dw: int
    act: int
    alpha: float
    beta: float
    has_bias: int
    total: int  # output elements

    @property
    def depthwise(self) -> bool:
        return self.g == self.c and self.c > 1

    @property
    def pointwise(self) -> bool:
        """A 1x1 convolution with stride 1 and no padding: a GEMM per (image, group)."""
        return (self.kh, self.kw, self.sh, self.sw) == (1, 1, 1, 1) and list(self.pads) == [0, 0, 0, 0]

    @property
    def gemm(self) -> tuple[int, int, int]:
        """The implicit GEMM per group: (output channels, K = cg*kh*kw, columns = n*oh*ow)."""
        return self.o // self.g, self.cg * self.kh * self.kw, self.n * self.oh * self.ow

    def dw_params(self) -> bytes:
        """conv_dw.comp's parameters."""
        p = self
        pt, pl = p.pads[0], p.pads[1]
        geometry = (p.kh, p.kw, p.sh, p.sw, pt, pl, p.dh, p.dw)
        return pack(p.total, p.c, p.h, p.w, p.o, p.oh, p.ow, *geometry, p.has_bias, p.act, p.alpha, p.beta)

    def conv2d_params(self, splits: int, chunk: int) -> bytes:
        """conv2d.comp's parameters, K cut into `splits` slices of `chunk`."""
        p = self
        pt, pl = p.pads[0], p.pads[1]
        geometry = (p.g, p.kh, p.kw, p.sh, p.sw, pt, pl, p.dh, p.dw)
        return pack(p.n, p.c, p.h, p.w, p.o, p.oh, p.ow, *geometry, p.act, p.has_bias, p.alpha, p.beta, splits, chunk)

    def pointwise_params(self) -> bytes:
        return pointwise_params(
            self.n, self.c, self.h * self.w, self.o, self.g, self.has_bias, self.act, self.alpha, self.beta
        )

    def k_table(self) -> np.ndarray:
        return k_table(self.cg, self.kh, self.kw, self.dh, self.dw, self.h, self.w)


def conv_plan(op: SegmentOp) -> ConvPlan:
    """The ConvPlan of a Conv SegmentOp (NCHW input, OIHW weight, optional bias)."""

    x, w = op.inputs[0], op.inputs[1]
    n, c, h, wd = x.info.shape
    o, cg, kh, kw = w.info.shape
    geo = conv_geometry(x.info.shape, w.info.shape, op.node.attrs)
    (sh, sw), (dh, dw) = geo["strides"], geo["dilations"]
    _, _, oh, ow = geo["out"]
    act, alpha, beta = activation_code(op.node.attrs)
    has_bias = int(len(op.inputs) > 2 and op.inputs[2] is not None)
    return ConvPlan(
        n,
        c,
        h,
        wd,
        o,
        cg,
        kh,
        kw,
        oh,
        ow,
        geo["group"],
        tuple(geo["pads"]),
        sh,
        sw,
        dh,
        dw,
        act,
        alpha,
        beta,
        has_bias,
        op.outputs[0].info.size,
    )


def k_table(cg: int, kh: int, kw: int, dh: int, dw: int, h: int, w: int) -> np.ndarray:
    """conv2d.comp's table: per k = (ci, ky, kx) of a group, the input offset
    ci*H*W + dy*W + dx and the tap's (dy, dx)."""
    ci, ky, kx = np.meshgrid(np.arange(cg), np.arange(kh), np.arange(kw), indexing="ij")
    dy, dx = ky * dh, kx * dw
    return np.stack([ci * h * w + dy * w + dx, dy, dx], axis=-1).reshape(-1).astype(np.int32)


# -- pooling, reductions, pad, copies ------------------------------------------------------------


def pool_fields(x_shape: Sequence[int], y_shape: Sequence[int], geo: dict, mode: int, include_pad: int) -> list[int]:
    """pool2d's parameters in its order: the output's size, the planes, the window (`geo`'s kernel,
    strides, four pads and dilations), mode (0 max, 1 average) and count_include_pad."""
    _, _, h, w = x_shape
    _, _, oh, ow = y_shape
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    return [numel(y_shape), h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, mode, int(include_pad)]


def pool_params(op: SegmentOp) -> bytes:
    """pool2d.comp's parameters for a MaxPool / AveragePool SegmentOp."""

    x, y = op.inputs[0], op.outputs[0]
    attrs = op.node.attrs
    geo = pool_geometry(x.info.shape, attrs, op.node.op)
    mode = 0 if op.node.op == "MaxPool" else 1
    return pack(*pool_fields(x.info.shape, y.info.shape, geo, mode, attrs.get("count_include_pad", 0)))


def reduce_params(op: SegmentOp) -> tuple[bytes, int]:
    """reduce.comp's parameters for a Reduce* or global-pool SegmentOp, and the length of
    the reduced rows (for the work-group size)."""
    x, y = op.inputs[0], op.outputs[0]
    (kd, ks), (rd, rs) = reduce_plan(op.node.op, x.info.shape, op.node.attrs)
    r = numel(rd)
    params = pack(
        *(y.info.size, r, REDUCE[op.node.op], len(kd), len(rd), 0, 0, 0),
        *(pad_to(kd, 4, 1), pad_to(ks, 4), pad_to(rd, 4, 1), pad_to(rs, 4)),
    )
    return params, r


def reduce_supports(node: Node, ins: Sequence[TensorInfo]) -> bool | str:
    """reduce.comp takes up to 4 kept and 4 reduced dims after collapsing."""
    (kd, _), (rd, _) = reduce_plan(node.op, ins[0].shape, node.attrs)
    if len(kd) > 4 or len(rd) > 4:
        return f"the axes leave {len(kd)} kept and {len(rd)} reduced dims after collapsing (max 4 each)"
    return True


def pad_params(op: SegmentOp) -> bytes:
    """pad.comp's parameters for a Pad SegmentOp (negative pads crop)."""
    x, y = op.inputs[0], op.outputs[0]
    rank = len(x.info.shape)
    begin = op.node.attrs["pads"][:rank]
    return pack(
        y.info.size,
        rank,
        PAD_MODES[op.node.attrs["mode"]],
        float(op.node.attrs["value"]),
        pad6(x.info.shape, 1),
        pad6(y.info.shape, 1),
        pad6(begin),
    )


def copy_params(
    shape: Sequence[int],
    src_strides: Sequence[int],
    dst_strides: Sequence[int],
    src_off: int = 0,
    dst_off: int = 0,
    words: int = 1,
) -> tuple[bytes, int]:
    """copy.comp's parameters and element count for dst[dst_off + idx . dst_strides] =
    src[src_off + idx . src_strides] over every idx of shape, in elements of `words`
    32-bit words (2 for int64): one more, innermost dim then walks an element's words."""
    if words > 1:
        shape = list(shape) + [words]
        src_strides = [s * words for s in src_strides] + [1]
        dst_strides = [s * words for s in dst_strides] + [1]
        src_off, dst_off = src_off * words, dst_off * words
    total = numel(shape)
    dims, (ss, ds) = collapse(shape, src_strides, dst_strides)
    if len(dims) > 6:
        raise ValueError(f"a copy of {len(dims)} dims after collapsing (max 6)")
    return pack(total, len(dims), src_off, dst_off, pad6(dims, 1), pad6(ss), pad6(ds)), total


# -- Resize (resize.comp) ----------------------------------------------------------------------


def _nearest(coord: np.ndarray, size: int, mode: str) -> np.ndarray:
    if mode == "floor":
        idx = np.floor(coord)
    elif mode == "ceil":
        idx = np.ceil(coord)
    else:  # round to nearest; an exact half goes the way the mode prefers
        half = coord - np.floor(coord) == 0.5
        idx = np.where(half, np.floor(coord) if mode == "round_prefer_floor" else np.ceil(coord), np.round(coord))
    return np.clip(idx, 0, size - 1)


def resize_axis_table(out_size: int, in_size: int, scale: float, attrs: dict) -> np.ndarray:
    """Per output position of one axis of a Resize: (lo, hi, w_lo, w_hi), the two source
    indices and their weights, in float64 with the core's own coordinate transform."""
    from mnn_core.ops.resize import source_coordinate

    if out_size == in_size and scale == 1.0:  # an unscaled axis samples itself in every mode
        i = np.arange(out_size, dtype=np.float64)
        return np.stack([i, i, np.ones_like(i), np.zeros_like(i)], axis=1)
    coord = source_coordinate(out_size, in_size, scale, attrs["coordinate_transformation_mode"])
    if attrs["mode"] == "nearest":
        idx = _nearest(coord, in_size, attrs["nearest_mode"])
        return np.stack([idx, idx, np.ones_like(idx), np.zeros_like(idx)], axis=1)
    coord = np.clip(coord, 0, in_size - 1)
    lo = np.floor(coord)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = coord - lo
    return np.stack([lo, hi, 1.0 - frac, frac], axis=1)


def resize_tables(x_shape: Sequence[int], attrs: dict) -> tuple[tuple[int, int, int, int], np.ndarray]:
    """A 2-D Resize of an NCHW tensor: ((h, w, oh, ow), its rows' then its columns'
    resize_axis_table, stacked)."""
    from mnn_core.ops.resize import resize_plan

    _, _, h, w = x_shape
    (oh, ow), (sh, sw) = resize_plan(x_shape, attrs)
    table = np.concatenate([resize_axis_table(oh, h, sh, attrs), resize_axis_table(ow, w, sw, attrs)])
    return (h, w, oh, ow), table

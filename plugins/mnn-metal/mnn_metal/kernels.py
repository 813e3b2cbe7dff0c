"""Op -> kernel mapping: each op becomes dispatches of the generated kernels.

The same recording as mnn-vulkan's kernels (the kernels *are* its shaders, so
the parameter bytes, bindings and grids must be exactly what those shaders
read), for the op families a CNN needs: broadcasting binary arithmetic with a
fused activation, unary math and activations, Conv (depthwise, 1x1 as a GEMM,
the rest as an implicit GEMM), pooling, reductions and global pools, Gemm and
MatMul, Concat, Pad and the reshapes. Ops outside this list fall back to another
backend (the reason shows in `session.plan`). Split-K and gemv, which
mnn-vulkan tuned on NVIDIA, are left out until they can be measured on a Mac.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from mnn_core.backend import KernelSpec

from .recorder import HALF_OPS, MAX_ELEMENTS, MAX_GROUPS, pack, row_groups

F32 = ("float32",)
WORDS = ("float32", "int32", "int64")  # what a copy of 32-bit words can move


@dataclass(frozen=True)
class MetalKernel:
    spec: KernelSpec
    record: Callable  # record(op: SegmentOp, rec: Recorder)


KERNELS: dict[str, MetalKernel] = {}


def _guarded(supports):
    """Decline tensors the shaders cannot address with 32-bit indices."""

    def check(node, ins):
        for info in ins:
            if info is not None and info.size > MAX_ELEMENTS:
                return f"a tensor of {info.size} elements exceeds the 32-bit indexing of the kernels"
        return True if supports is None else supports(node, ins)

    return check


def register(
    op: str, record: Callable, supports=None, dtypes=F32, inplace: bool = False, efficiency: float = 0.5
) -> None:
    KERNELS[op] = MetalKernel(
        KernelSpec(op, dtypes, inplace=inplace, supports=_guarded(supports), efficiency=efficiency), record
    )


# -- helpers shared by the families ------------------------------------------------------


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pad6(values, fill=0) -> list:
    return list(values) + [fill] * (6 - len(values))


def contiguous_strides(dims) -> list[int]:
    strides, acc = [], 1
    for d in reversed(dims):
        strides.append(acc)
        acc *= d
    return strides[::-1]


def collapse(dims, *strides):
    """Drop size-1 dims and merge neighbours that are contiguous in every stride list."""
    out: list = []
    for i, d in enumerate(dims):
        if d == 1:
            continue
        st = [s[i] for s in strides]
        if out and all(prev == cur * d for prev, cur in zip(out[-1][1], st)):
            out[-1] = (out[-1][0] * d, st)
        else:
            out.append((d, st))
    return [d for d, _ in out], [[st[k] for _, st in out] for k in range(len(strides))]


def activation_code(attrs: dict) -> tuple[int, float, float]:
    """A fused activation as act.glsl's code and its two parameters."""
    from mnn_core.ops.elementwise import ACTIVATIONS

    return (
        ACTIVATIONS.index(attrs.get("activation", "none")),
        float(attrs.get("act_alpha", 0.0)),
        float(attrs.get("act_beta", 0.0)),
    )


# -- element-wise ---------------------------------------------------------------------------

BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3, "Pow": 4, "Max": 5, "Min": 6, "PRelu": 7}
#: op -> (code in act.glsl, attribute giving alpha, attribute giving beta)
UNARY = {
    "Relu": (1, None, None),
    "Clip": (2, "min", "max"),
    "LeakyRelu": (3, "alpha", None),
    "Sigmoid": (4, None, None),
    "Silu": (5, None, None),
    "Gelu": (6, None, None),
    "Tanh": (7, None, None),
    "HardSigmoid": (8, "alpha", "beta"),
    "HardSwish": (9, None, None),
    "Exp": (16, None, None),
    "Log": (17, None, None),
    "Sqrt": (18, None, None),
    "Neg": (19, None, None),
    "Abs": (20, None, None),
    "Reciprocal": (21, None, None),
    "Erf": (22, None, None),
    "Floor": (23, None, None),
    "Ceil": (24, None, None),
    "Sin": (25, None, None),
    "Cos": (26, None, None),
    "Softplus": (27, None, None),
    "Round": (29, None, None),
    "Sign": (30, None, None),
    "Softsign": (31, None, None),
    "Mish": (32, None, None),
    "Elu": (33, "alpha", None),
    "Celu": (34, "alpha", None),
    "Selu": (35, "alpha", "gamma"),
    "ThresholdedRelu": (36, "alpha", None),
    "Shrink": (37, "bias", "lambd"),
    "Tan": (38, None, None),
    "Sinh": (39, None, None),
    "Cosh": (40, None, None),
}


def broadcast_plan(out_shape, *in_shapes):
    """Collapsed output dims and each input's element strides (0 where it broadcasts)."""
    rank = len(out_shape)
    strides = []
    for shape in in_shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        cs = contiguous_strides(padded)
        strides.append([0 if d == 1 and o != 1 else s for d, o, s in zip(padded, out_shape, cs)])
    return collapse(out_shape, *strides)


def _binary_supports(node, ins):
    out = tuple(np.broadcast_shapes(*(i.shape for i in ins)))
    dims, _ = broadcast_plan(out, ins[0].shape, ins[1].shape)
    return True if len(dims) <= 6 else f"broadcast pattern needs {len(dims)} dims after collapsing (max 6)"


def _record_binary(op, rec, act=(0, 0.0, 0.0)):
    a, b = op.inputs
    y = op.outputs[0]
    dims, (sa, sb) = broadcast_plan(y.info.shape, a.info.shape, b.info.shape)
    params = pack(y.info.size, len(dims), BINARY[op.node.op], act[0], pad6(dims, 1), pad6(sa), pad6(sb), *act[1:])
    rec.elementwise("binary", [rec.tensor(a), rec.tensor(b), rec.output(y)], params, y.info.size)


def _param(attrs, name):
    return 0.0 if name is None else float(attrs[name])


def fused_activation(op, nxt):
    """(code, alpha, beta) when `nxt` is an activation applied in place to `op`'s result
    (the core aliases it only when it is the result's one reader), else None."""
    if op.node.op not in BINARY or nxt is None or nxt.node.op not in UNARY:
        return None
    code, alpha, beta = UNARY[nxt.node.op]
    src, dst = op.outputs[0], nxt.outputs[0]
    if code > 9 or nxt.inputs[0].name != src.name or dst.offset != src.offset or dst.info != src.info:
        return None
    return code, _param(nxt.node.attrs, alpha), _param(nxt.node.attrs, beta)


def record_fused(op, act, rec):
    _record_binary(op, rec, act)


def _record_unary(op, rec):
    code, alpha, beta = UNARY[op.node.op]
    x, y = op.inputs[0], op.outputs[0]
    params = pack(y.info.size, code, _param(op.node.attrs, alpha), _param(op.node.attrs, beta))
    rec.elementwise("unary", [rec.tensor(x), rec.output(y)], params, y.info.size)


# -- GEMM tiling (gemm.comp, conv2d.comp: tile.glsl's TM, TN, BK) -------------------------------

#: (threads per threadgroup, (TM, TN, BK)); a block of TY*TM x TX*TN outputs
WIDE = ((16, 16, 1), (2, 4, 16))
MID = ((16, 16, 1), (2, 2, 16))
ONE = ((16, 16, 1), (1, 1, 16))
TILES = {"wide": WIDE, "mid": MID, "one": ONE}
#: threadgroups that keep an Apple GPU busy (an M1 Max has 32 cores; a guess until measured on one)
ENOUGH = 64


def _blocks(local, spec):
    return local[1] * spec[0], local[0] * spec[1]


def gemm_tiles(m: int, n: int, batch: int, options: dict | None = None):
    """(threads, spec constants, (BM, BN)): the largest tile that still gives every GPU
    core work. The option "metal.tiles" (wide, mid, one) forces one."""
    forced = (options or {}).get("metal.tiles")
    if forced:
        if forced not in TILES:
            raise ValueError(f"metal.tiles must be one of {', '.join(TILES)}, got {forced!r}")
        local, spec = TILES[forced]
        return local, spec, _blocks(local, spec)
    best = None
    for local, spec in (WIDE, MID, ONE):
        bm, bn = _blocks(local, spec)
        groups = cdiv(m, bm) * cdiv(n, bn) * batch
        if groups >= ENOUGH:
            return local, spec, (bm, bn)
        if best is None or groups > best[0]:
            best = (groups, local, spec, (bm, bn))
    return best[1:]


def _gemm(rec, bindings, m, n, k, nb1, nb2, a_st, b_st, c_st, bias_st, alpha, beta, act, aa, ab):
    has_bias = int(bias_st is not None)
    params = pack(
        m, n, k, nb2, *a_st, *b_st, *c_st, has_bias, act, *(bias_st or (0, 0, 0, 0)), float(alpha), float(beta), aa, ab
    )
    local, spec, (bm, bn) = gemm_tiles(m, n, nb1 * nb2, rec.options)
    rec.dispatch("gemm", bindings, params, (cdiv(n, bn), cdiv(m, bm), nb1 * nb2), local, spec)


def _record_gemm(op, rec):
    attrs = op.node.attrs
    a, b = op.inputs[0], op.inputs[1]
    c = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    m, n = y.info.shape
    k = a.info.shape[0] if attrs["transA"] else a.info.shape[1]
    a_st = (1, m, 0, 0) if attrs["transA"] else (k, 1, 0, 0)
    b_st = (1, k, 0, 0) if attrs["transB"] else (n, 1, 0, 0)
    bias_st = None
    if c is not None:
        cm, cn = ((1, 1) + tuple(c.info.shape))[-2:]
        bias_st = (cn if cm != 1 else 0, 1 if cn != 1 else 0, 0, 0)
    act, aa, ab = activation_code(attrs)
    bindings = [rec.tensor(a), rec.tensor(b), rec.tensor(c if c is not None else a), rec.output(y)]
    _gemm(rec, bindings, m, n, k, 1, 1, a_st, b_st, (0, 0), bias_st, attrs["alpha"], attrs["beta"], act, aa, ab)


def _matmul_supports(node, ins):
    a, b = ins[0].shape, ins[1].shape
    if len(a) < 2 or len(b) < 2 or len(a) != len(b) or tuple(a[:-2]) != tuple(b[:-2]):
        return "MatMul of equal-rank (>= 2) operands with equal batch dims only"
    batch = int(np.prod(a[:-2])) if len(a) > 2 else 1
    return True if batch <= MAX_GROUPS else f"{batch} matrices exceed the grid"


def _record_matmul(op, rec):
    a, b = op.inputs
    y = op.outputs[0]
    m, k, n = a.info.shape[-2], a.info.shape[-1], b.info.shape[-1]
    batch = int(np.prod(a.info.shape[:-2])) if len(a.info.shape) > 2 else 1
    act, aa, ab = activation_code(op.node.attrs)
    _gemm(
        rec,
        [rec.tensor(a), rec.tensor(b), rec.tensor(a), rec.output(y)],
        m,
        n,
        k,
        1,
        batch,
        (k, 1, 0, m * k),
        (n, 1, 0, k * n),
        (0, m * n),
        None,
        1.0,
        0.0,
        act,
        aa,
        ab,
    )


# -- Conv ------------------------------------------------------------------------------------


def _conv_supports(node, ins):
    if len(ins[0].shape) != 4:
        return f"2-D convolution only (NCHW input), got rank {len(ins[0].shape)}"
    groups = node.attrs.get("group", 1)
    return True if groups <= MAX_GROUPS else f"{groups} groups exceed the grid"


def k_table(cg, kh, kw, dh, dw, h, w) -> np.ndarray:
    """Per k = (ci, ky, kx) of a group: the input offset ci*H*W + dy*W + dx and the tap's (dy, dx)."""
    ci, ky, kx = np.meshgrid(np.arange(cg), np.arange(kh), np.arange(kw), indexing="ij")
    dy, dx = ky * dh, kx * dw
    return np.stack([ci * h * w + dy * w + dx, dy, dx], axis=-1).reshape(-1).astype(np.int32)


def _record_conv(op, rec):
    from mnn_core.ops.conv import conv_geometry

    x, w = op.inputs[0], op.inputs[1]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    y = op.outputs[0]
    n, c, h, wd = x.info.shape
    o, cg, kh, kw = w.info.shape
    geo = conv_geometry(x.info.shape, w.info.shape, op.node.attrs)
    (pt, pl, _, _), (sh, sw), (dh, dw) = geo["pads"], geo["strides"], geo["dilations"]
    _, _, oh, ow = geo["out"]
    g = geo["group"]
    act, a, b = activation_code(op.node.attrs)
    has_bias = int(bias is not None)
    # under float16 storage the weights and bias are float16 in the arena too (the core uploads
    # them through MetalArena.write, which narrows), and dispatch() picks the *_h kernels
    bindings = [rec.tensor(x), rec.tensor(w), rec.tensor(bias if bias is not None else w), rec.output(y)]
    if g == c and c > 1:
        params = pack(y.info.size, c, h, wd, o, oh, ow, kh, kw, sh, sw, pt, pl, dh, dw, has_bias, act, a, b)
        rec.elementwise("conv_dw", bindings, params, y.info.size)
        return
    og, k, cols = o // g, cg * kh * kw, n * oh * ow
    pointwise = (kh, kw, sh, sw) == (1, 1, 1, 1) and list(geo["pads"]) == [0, 0, 0, 0]
    if pointwise and n * g <= MAX_GROUPS:
        _pointwise(rec, bindings, n, c, h * wd, o, g, has_bias, act, a, b)
        return
    local, spec, (bm, bn) = gemm_tiles(og, cols, g, rec.options)
    chunk = cdiv(k, 16) * 16  # one K slice (no split-K), in whole BK steps
    params = pack(n, c, h, wd, o, oh, ow, g, kh, kw, sh, sw, pt, pl, dh, dw, act, has_bias, a, b, 1, chunk)
    table = rec.constant(k_table(cg, kh, kw, dh, dw, h, wd))
    # binding 4 is split-K's partial sums (float32 even in conv2d_h); one K slice writes binding 3 only
    rec.dispatch("conv2d", bindings + [bindings[3], table], params, (cdiv(cols, bn), cdiv(og, bm), g), local, spec)


def _pointwise(rec, bindings, n, c, hw, o, g, has_bias, act, a, b):
    """Y[img][g] (og x HW) = W[g] (og x cg) @ X[img][g] (cg x HW): one GEMM per (image, group)."""
    og, cg = o // g, c // g
    x, w, bias, y = bindings
    local, spec, (bm, bn) = gemm_tiles(og, hw, n * g, rec.options)
    params = pack(
        og,
        hw,
        cg,
        g,
        cg,
        1,
        0,
        og * cg,  # A = W: rows m, columns k; batch (image, group)
        hw,
        1,
        c * hw,
        cg * hw,  # B = X
        o * hw,
        og * hw,
        has_bias,
        act,  # C = Y
        1,
        0,
        0,
        og,  # bias per output channel
        1.0,
        1.0,
        a,
        b,
    )
    rec.dispatch("gemm", [w, x, bias, y], params, (cdiv(hw, bn), cdiv(og, bm), n * g), local, spec)


# -- pooling and reductions -------------------------------------------------------------------


def _record_pool(op, rec):
    from mnn_core.ops.pool import pool_geometry

    x, y = op.inputs[0], op.outputs[0]
    attrs = op.node.attrs
    geo = pool_geometry(x.info.shape, attrs, op.node.op)
    _, _, h, w = x.info.shape
    _, _, oh, ow = geo["out"]
    (kh, kw), (sh, sw), (dh, dw) = geo["kernel"], geo["strides"], geo["dilations"]
    pt, pl, pb, pr = geo["pads"]
    mode = 0 if op.node.op == "MaxPool" else 1
    params = pack(
        y.info.size, h, w, oh, ow, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, mode, int(attrs.get("count_include_pad", 0))
    )
    rec.elementwise("pool2d", [rec.tensor(x), rec.output(y)], params, y.info.size)


def _pool_supports(node, ins):
    return True if len(ins[0].shape) == 4 else "2-D pooling over NCHW only"


REDUCE = {
    "ReduceSum": 0,
    "ReduceMean": 1,
    "ReduceMax": 2,
    "ReduceMin": 3,
    "ReduceProd": 4,
    "ReduceL2": 5,
    "GlobalAveragePool": 1,
    "GlobalMaxPool": 2,
}


def _reduce_axes(op, shape, attrs):
    if op.startswith("Global"):
        return tuple(range(2, len(shape)))
    if not attrs["axes"]:
        return () if attrs["noop_with_empty_axes"] else tuple(range(len(shape)))
    return tuple(sorted(a % len(shape) for a in attrs["axes"]))


def reduce_plan(op, shape, attrs):
    """(kept dims, kept strides), (reduced dims, reduced strides), collapsed."""
    axes = _reduce_axes(op, shape, attrs)
    strides = contiguous_strides(shape)
    kept = collapse(
        [d for i, d in enumerate(shape) if i not in axes], [s for i, s in enumerate(strides) if i not in axes]
    )
    red = collapse([d for i, d in enumerate(shape) if i in axes], [s for i, s in enumerate(strides) if i in axes])
    return (kept[0], kept[1][0]), (red[0], red[1][0])


def _reduce_supports(node, ins):
    (kd, _), (rd, _) = reduce_plan(node.op, ins[0].shape, node.attrs)
    if len(kd) > 4 or len(rd) > 4:
        return f"the axes leave {len(kd)} kept and {len(rd)} reduced dims after collapsing (max 4 each)"
    return True


def _record_reduce(op, rec):
    x, y = op.inputs[0], op.outputs[0]
    (kd, ks), (rd, rs) = reduce_plan(op.node.op, x.info.shape, op.node.attrs)
    r = int(np.prod(rd)) if rd else 1
    local = 64 if r <= 1024 else 256

    def pad4(v, fill):
        return list(v) + [fill] * (4 - len(v))

    params = pack(
        y.info.size,
        r,
        REDUCE[op.node.op],
        len(kd),
        len(rd),
        0,
        0,
        0,
        pad4(kd, 1),
        pad4(ks, 0),
        pad4(rd, 1),
        pad4(rs, 0),
    )
    rec.dispatch("reduce", [rec.tensor(x), rec.output(y)], params, row_groups(y.info.size), (local, 1, 1))


# -- data movement (copy.comp) ------------------------------------------------------------------


#: _words() of a float tensor stored as float16: copy() moves 16-bit elements (copy_h)
HALF = 0


def _words(ref, rec=None) -> int:
    if rec is not None and rec.native and rec.is_half(ref):
        return HALF
    return ref.info.nbytes // max(ref.info.size, 1) // 4 if ref.info.size else 1


def copy(rec, src, dst, shape, src_strides, dst_strides, src_off: int = 0, dst_off: int = 0, words: int = 1):
    """dst[dst_off + idx . dst_strides] = src[src_off + idx . src_strides] for every idx of shape,
    in elements of `words` 32-bit words (2 for int64; HALF: one float16, copy_h)."""
    kernel = "copy"
    if words == HALF:
        kernel, words = "copy_h", 1
    if words > 1:
        shape = list(shape) + [words]
        src_strides = [s * words for s in src_strides] + [1]
        dst_strides = [s * words for s in dst_strides] + [1]
        src_off, dst_off = src_off * words, dst_off * words
    total = int(np.prod(shape)) if len(shape) else 1
    dims, (ss, ds) = collapse(shape, src_strides, dst_strides)
    if len(dims) > 6:
        raise ValueError(f"a copy of {len(dims)} dims after collapsing (max 6)")
    params = pack(total, len(dims), src_off, dst_off, pad6(dims, 1), pad6(ss), pad6(ds))
    rec.elementwise(kernel, [src, dst], params, total)


def _record_view(op, rec):
    """A reshape the core did not alias (it aliases most): one flat copy."""
    x, y = op.inputs[0], op.outputs[0]
    copy(rec, rec.tensor(x), rec.output(y), (y.info.size,), [1], [1], words=_words(x, rec))


def _record_concat(op, rec):
    y = op.outputs[0]
    axis = op.node.attrs["axis"] % len(y.info.shape)
    ost = contiguous_strides(y.info.shape)
    start = 0
    out = rec.output(y)
    for x in op.inputs:
        copy(
            rec,
            rec.tensor(x),
            out,
            x.info.shape,
            contiguous_strides(x.info.shape),
            ost,
            0,
            start * ost[axis],
            _words(x, rec),
        )
        start += x.info.shape[axis]


def _rank6(node, ins):
    return True if len(ins[0].shape) <= 6 else f"rank {len(ins[0].shape)} above 6"


PAD_MODES = {"constant": 0, "reflect": 1, "edge": 2, "wrap": 3}


def _record_pad(op, rec):
    """Pad (or crop: negative pads) in four modes. pad has no float16 variant: under float16
    storage it runs on float32 copies (widen before, narrow after), as in mnn-vulkan."""
    x, y = op.inputs[0], op.outputs[0]
    rank = len(x.info.shape)
    begin = op.node.attrs["pads"][:rank]
    params = pack(
        y.info.size,
        rank,
        PAD_MODES[op.node.attrs["mode"]],
        float(op.node.attrs["value"]),
        pad6(x.info.shape, 1),
        pad6(y.info.shape, 1),
        pad6(begin),
    )
    rec.elementwise("pad", [rec.tensor(x), rec.output(y)], params, y.info.size)


# -- registration -------------------------------------------------------------------------------

for _op in BINARY:
    register(_op, _record_binary, _binary_supports, inplace=_op == "PRelu", efficiency=0.8)
for _op in UNARY:
    register(_op, _record_unary, inplace=True, efficiency=0.8)
HALF_OPS.update(UNARY)  # unary has a float16 variant
register("Conv", _record_conv, _conv_supports, efficiency=0.3)
register("Gemm", _record_gemm, efficiency=0.3)
register("MatMul", _record_matmul, _matmul_supports, efficiency=0.3)
register("MaxPool", _record_pool, _pool_supports)
register("AveragePool", _record_pool, _pool_supports)
for _op in REDUCE:
    register(_op, _record_reduce, _reduce_supports)
for _op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze"):
    register(_op, _record_view, dtypes=WORDS, inplace=True, efficiency=1.0)
register("Identity", _record_view, dtypes=WORDS, efficiency=1.0)
register("Concat", _record_concat, _rank6, dtypes=WORDS, efficiency=0.8)
register("Pad", _record_pad, _rank6, efficiency=0.8)  # not in HALF_OPS: widened under float16


def record_segment(ops, rec) -> None:
    """Every op of a segment onto `rec`, an activation fused into the binary op before it."""
    skip = False
    for op, nxt in zip(ops, list(ops[1:]) + [None]):
        if skip:
            skip = False
            continue
        rec.op_name = op.node.name
        rec.begin_op(op.node.op)
        act = fused_activation(op, nxt)
        if act is not None:
            record_fused(op, act, rec)
            skip = True
        else:
            KERNELS[op.node.op].record(op, rec)
        rec.end_op()

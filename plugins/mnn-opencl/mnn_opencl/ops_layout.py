"""Data movement: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice,
Concat, Split, Expand, Tile, DepthToSpace, SpaceToDepth (kernels/layout.cl).

Rather than re-deriving each op's index arithmetic, the backend asks the op's
own reference kernel: run on inputs holding their element numbers, it returns
for every output element the input element it copies (and the op is checked
to be a pure copy on random data). That map is then compiled:

- one input, affine in the output coordinates (transpose, slice with any
  steps, broadcast, reshape): one strided copy;
- several inputs, each landing on an affine slab (concat): a strided copy per
  input;
- anything else (tile): a gather through a table of arena offsets.

Resize (nearest, bilinear; every coordinate mode of the schema) uses
separable per-row / per-column tables from the schema's own coordinate rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mnn_core.backend.kit import quant
from mnn_core.ops import get_schema
from mnn_core.ops.schema import is_view

from ._common import collapse, contiguous_strides, full_attrs, int8, kernel, numel
from .copies import launch_float_copy
from .ops_quant import build_cast_to_bytes

MOVEMENT_OPS = (
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Slice",
    "Concat",
    "Split",
    "Expand",
    "Tile",
    "DepthToSpace",
    "SpaceToDepth",
    "Pad",
)
#: data movement copies bits, so any dtype goes (float32 through the float kernels, the
#: rest through unsigned integers of their width)
MOVEMENT_DTYPES = ("float32", "float16", "int64", "int32", "int8", "uint8", "bool")
PROBE_LIMIT = 1 << 26  # elements: larger tensors are declined rather than probed


@dataclass(frozen=True)
class Copy:
    """One launch: walk `shape`; read input `source` at base + strides, write the output likewise."""

    source: int
    shape: tuple
    src_base: int
    src_strides: tuple
    dst_base: int
    dst_strides: tuple


@dataclass(frozen=True)
class Table:
    """Output element i copies input `sources[i]` element `elements[i]`; source -1: `fill`."""

    sources: np.ndarray
    elements: np.ndarray
    fill: float = 0.0


_plans: dict = {}


def _affine(values: np.ndarray, shape: tuple) -> tuple | None:
    """(base, strides) when values[c] == base + sum(c_d * strides_d) over `shape`, else None."""
    v = values.reshape(shape)
    base = int(v.flat[0])
    strides = []
    for d, size in enumerate(shape):
        if size == 1:
            strides.append(0)
            continue
        e = [0] * len(shape)
        e[d] = 1
        strides.append(int(v[tuple(e)]) - base)
    predicted = np.full(shape, base, np.int64)
    for d, (size, st) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[d] = size
        predicted = predicted + (np.arange(size, dtype=np.int64) * st).reshape(view)
    return (base, tuple(strides)) if np.array_equal(predicted, v) else None


def _plan_output(m: np.ndarray, out_shape: tuple, in_shapes: list, bases: np.ndarray, fill=None) -> list:
    """The launches that produce one output whose element i copies global element m[i]
    (or, where m[i] < 0, the constant `fill`)."""
    flat = m.reshape(-1)
    if fill is not None:
        source = np.where(flat >= 0, np.searchsorted(bases, flat, side="right") - 1, -1)
        elements = np.where(flat >= 0, flat - bases[np.maximum(source, 0)], 0)
        return [Table(source.astype(np.int64), elements.astype(np.int64), float(fill))]
    source = np.searchsorted(bases, flat, side="right") - 1
    if len(np.unique(source)) == 1:
        k = int(source[0])
        fit = _affine(flat - bases[k], out_shape)
        if fit is not None:
            return [Copy(k, out_shape, fit[0], fit[1], 0, tuple(contiguous_strides(out_shape)))]
    else:
        copies = []
        for k in np.unique(source):
            k = int(k)
            positions = np.flatnonzero(source == k)
            elements = flat[positions] - bases[k]
            size = numel(in_shapes[k])
            if len(positions) != size or len(np.unique(elements)) != size:
                break  # an input copied more than once or not entirely: not a slab
            where = np.empty(size, np.int64)
            where[elements] = positions
            fit = _affine(where, in_shapes[k])
            if fit is None:
                break
            copies.append(Copy(k, in_shapes[k], 0, tuple(contiguous_strides(in_shapes[k])), fit[0], fit[1]))
        else:
            return copies
    return [Table(source.astype(np.int64), (flat - bases[source]).astype(np.int64))]


def movement_plan(node, infos) -> list | str:
    """Per output, the launches that compute it; or why the op is not pure data movement."""
    shapes = tuple(tuple(int(d) for d in i.shape) for i in infos)
    key = (node.op, repr(sorted(node.attrs.items())), shapes, len(node.outputs))
    if key in _plans:
        return _plans[key]
    sizes = [numel(s) for s in shapes]
    if sum(sizes) > PROBE_LIMIT:
        return f"inputs of more than {PROBE_LIMIT} elements"
    schema = get_schema(node.op)
    attrs = full_attrs(node)
    bases = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    shift = int(bases[-1]) + 1000  # numbering twice, this far apart: elements that move with it are copies

    def numbered(start):
        return [
            np.arange(start + bases[k], start + bases[k + 1], dtype=np.int64).reshape(s) for k, s in enumerate(shapes)
        ]

    try:
        maps = schema.reference(numbered(1), attrs)[: len(node.outputs)]
        moved = schema.reference(numbered(1 + shift), attrs)[: len(node.outputs)]
        data = _random_like(infos, shapes)
        expected = schema.reference(data, attrs)[: len(node.outputs)]
    except Exception as exc:  # the op cannot be probed this way
        return f"cannot map its data movement ({type(exc).__name__}: {exc})"
    glued = np.concatenate([d.reshape(-1) for d in data] + [np.zeros(1, data[0].dtype if data else np.float32)])
    plan = []
    for m, m2, want in zip(maps, moved, expected):
        m, m2, want = np.asarray(m), np.asarray(m2), np.asarray(want)
        if m.dtype != np.int64 or m2.shape != m.shape or want.shape != m.shape:
            return "not a pure copy of its inputs"
        constant = m == m2
        copied = m2 - m == shift
        if not np.all(constant | copied) or (
            m.size and np.any(copied) and (m[copied].min() < 1 or m[copied].max() > bases[-1])
        ):
            return "not a pure copy of its inputs"
        index = np.where(copied, m - 1, -1)
        fill = None
        if np.any(constant):
            values = np.unique(want[constant])
            if len(values) != 1:
                return "not a copy of its inputs plus one constant"
            if infos and infos[0].dtype != "float32":
                return f"a constant fill of {infos[0].dtype} (only float32 fills)"
            fill = float(values[0])
        if not np.array_equal(np.where(copied, glued[index], want), want):
            return "not a pure copy of its inputs"
        plan.append([] if m.size == 0 else _plan_output(index, tuple(m.shape), list(shapes), bases[:-1], fill))
    if len(_plans) > 512:
        _plans.clear()
    _plans[key] = plan
    return plan


def _random_like(infos, shapes) -> list:
    rng = np.random.default_rng(0)
    out = []
    for info, shape in zip(infos, shapes):
        dtype = np.dtype(info.dtype)
        if dtype == np.bool_:
            out.append(rng.random(shape) > 0.5)
        elif dtype.kind in "iu":
            out.append(rng.integers(0, 100, size=shape).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def _supports(node, ins):
    if len({i.dtype for i in ins}) > 1:
        return "inputs of several dtypes"
    plan = movement_plan(node, ins)
    return plan if isinstance(plan, str) else True


def _width_suffix(dtype: str) -> str:
    """Which kernel family moves this dtype: the float one, or the bit copies of its width."""
    return "" if dtype == "float32" else f"_{np.dtype(dtype).itemsize}"


def _build_movement(op, b):
    plan = movement_plan(op.node, [r.info for r in op.inputs])
    ins = [b.tensor(r) for r in op.inputs]
    suffix = _width_suffix(op.outputs[0].info.dtype)
    for out_ref, launches in zip(op.outputs, plan):
        y = b.tensor(out_ref)
        for item in launches:
            if isinstance(item, Table):
                starts = np.array([t.offset for t in ins] + [0], np.int64)
                offsets = np.where(item.sources >= 0, starts[item.sources] + item.elements, -1)
                table = b.upload(offsets.astype(np.int32))
                fill = [item.fill] if not suffix else []
                b.launch("gather_table" + suffix, [b.arena.buffer, table, y, len(offsets), *fill], (len(offsets),))
                continue
            shape, (ss, ds) = collapse(item.shape, item.src_strides, item.dst_strides)
            src = ins[item.source]
            n = numel(item.shape)
            if not suffix:
                src_t = type(src)(src.buffer, src.offset + item.src_base)
                launch_float_copy(b, src_t, type(y)(y.buffer, y.offset + item.dst_base), shape, ss, ds)
                continue
            b.launch(
                "copy_strided" + suffix,
                [
                    type(src)(src.buffer, src.offset + item.src_base),
                    type(y)(y.buffer, y.offset + item.dst_base),
                    n,
                    len(shape),
                    int8(shape),
                    int8(ss),
                    int8(ds),
                ],
                (n,),
            )


for _op in MOVEMENT_OPS:
    kernel(_op, dtypes=MOVEMENT_DTYPES, supports=_supports, inplace=is_view(_op))(_build_movement)


# -- Cast ----------------------------------------------------------------------------------------------

CASTS = {
    ("float32", "int32"): "f32_i32",
    ("float32", "int64"): "f32_i64",
    ("float32", "bool"): "f32_bool",
    ("int32", "float32"): "i32_f32",
    ("int64", "float32"): "i64_f32",
    ("bool", "float32"): "bool_f32",
    ("int64", "int32"): "i64_i32",
    ("int32", "int64"): "i32_i64",
    ("int64", "bool"): "i64_bool",
    ("int32", "bool"): "i32_bool",
    ("bool", "int64"): "bool_i64",
    ("bool", "int32"): "bool_i32",
}


def _cast_supports(node, ins):
    to = full_attrs(node)["to"]
    if ins[0].dtype == to or (ins[0].dtype, to) in CASTS or quant.cast_to_bytes(node, ins):
        return True
    return f"a cast from {ins[0].dtype} to {to} (float32, int32, int64 and bool only)"


@kernel("Cast", dtypes=("float32", "int32", "int64", "bool"), supports=_cast_supports)
def _build_cast(op, b):
    x, y = op.inputs[0], op.outputs[0]
    if y.info.dtype in quant.BYTES and x.info.dtype != y.info.dtype:
        return build_cast_to_bytes(op, b)
    n = numel(y.info.shape)
    if x.info.dtype == y.info.dtype:
        suffix = _width_suffix(x.info.dtype)
        b.launch("copy_strided" + suffix, [b.tensor(x), b.tensor(y), n, 1, int8([n]), int8([1]), int8([1])], (n,))
        return
    b.launch("cast_" + CASTS[(x.info.dtype, y.info.dtype)], [b.tensor(x), b.tensor(y), n], (n,))


# -- Gather (float data, int indices: runtime or constant) --------------------------------------------


def _gather_supports(node, ins):
    if ins[0].dtype != "float32" or ins[1].dtype not in ("int64", "int32"):
        return "float32 data with int64/int32 indices only"
    return True


@kernel("Gather", dtypes=("float32", "int64", "int32"), supports=_gather_supports)
def _build_gather(op, b):
    attrs = full_attrs(op.node)
    x, idx = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    axis = attrs["axis"] % len(shape)
    n = numel(y.info.shape)
    name = "gather_axis_i64" if idx.info.dtype == "int64" else "gather_axis_i32"
    b.launch(
        name,
        [b.tensor(x), b.tensor(idx), b.tensor(y), n, numel(idx.info.shape), numel(shape[axis + 1 :]), int(shape[axis])],
        (n,),
    )


# -- Resize --------------------------------------------------------------------------------


def _resize_tables(in_size: int, out_size: int, scale: float, attrs) -> tuple[np.ndarray, np.ndarray]:
    """Per output position: two source indices and their weights."""
    from mnn_core.ops.resize import source_coordinate

    if out_size == in_size and scale == 1.0:  # an unscaled axis samples itself
        idx = np.arange(out_size)
        return np.stack([idx, idx], 1), np.stack([np.ones(out_size), np.zeros(out_size)], 1)
    coord = source_coordinate(out_size, in_size, scale, attrs["coordinate_transformation_mode"])
    if attrs["mode"] == "nearest":
        mode = attrs["nearest_mode"]
        if mode == "floor":
            idx = np.floor(coord)
        elif mode == "ceil":
            idx = np.ceil(coord)
        else:
            half = coord - np.floor(coord) == 0.5
            idx = np.where(half, np.floor(coord) if mode == "round_prefer_floor" else np.ceil(coord), np.round(coord))
        idx = np.clip(idx, 0, in_size - 1).astype(np.int64)
        return np.stack([idx, idx], 1), np.stack([np.ones(out_size), np.zeros(out_size)], 1)
    coord = np.clip(coord, 0, in_size - 1)
    lo = np.floor(coord).astype(np.int64)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = coord - lo
    return np.stack([lo, hi], 1), np.stack([1.0 - frac, frac], 1)


def _resize_supports(node, ins):
    from mnn_core.ops.resize import resize_2d_supports

    return resize_2d_supports(node, ins) if ins[0].dtype == "float32" else "float32 only"


@kernel("Resize", supports=_resize_supports)
def _build_resize(op, b):
    from mnn_core.ops.resize import resize_plan

    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    n, c, h, w = x.info.shape
    (oh, ow), (sh, sw) = resize_plan(x.info.shape, attrs)
    total = numel(y.info.shape)
    if total == 0:
        return
    hi, hw = _resize_tables(h, oh, sh, attrs)
    wi, ww = _resize_tables(w, ow, sw, attrs)
    idx = b.upload(np.concatenate([hi.reshape(-1), wi.reshape(-1)]).astype(np.int32))
    wt = b.upload(np.concatenate([hw.reshape(-1), ww.reshape(-1)]).astype(np.float32))
    b.launch("resize2d", [b.tensor(x), b.tensor(y), total, h, w, oh, ow, idx, wt], (total,))

"""Shape and layout ops: views (Reshape, Flatten, Squeeze, Unsqueeze) and data movement
(Transpose, Concat, Split, Slice, Gather); Pad, Expand and Tile are in grow.py, Shape with the shape
arithmetic in shape_arith.py, Cast in cast.py.

Where ONNX takes a constant tensor input (a shape, pads, axes, ...), the op here
takes a static attribute instead: shapes are known at resize, so every output
shape follows from the input shapes and the attributes alone.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ..graph.symbolic import is_sym, prod, unify
from ._util import info_like, normalize_axis, rand, same_dtype
from .schema import Attr, OpSchema, Sample, register


def _size(shape) -> int:
    return prod(shape) if any(is_sym(d) for d in shape) else int(np.prod(shape, dtype=np.int64))


def _axes(axes, rank, op) -> list:
    norm = [normalize_axis(a, rank, op) for a in axes]
    if len(set(norm)) != len(norm):
        raise GraphError(f"{op}: axes {list(axes)} name an axis twice (rank {rank})")
    return norm


def _view_op(name, target, samples, doc, **kw):
    """A view: same bytes, new shape (`target(shape, attrs)`); a backend may alias it."""
    register(
        OpSchema(
            name,
            infer=lambda ins, attrs: [info_like(ins[0], target(ins[0].shape, attrs))],
            reference=lambda ins, attrs: [ins[0].reshape(target(ins[0].shape, attrs)).copy()],
            flops=lambda ins, outs, attrs: 0.0,
            samples=samples,
            inplace=True,
            view=True,
            doc=doc,
            **kw,
        )
    )


# -- Reshape ---------------------------------------------------------------------------


def reshape_target(in_shape: tuple, shape: list, allowzero: int) -> tuple:
    """Resolve Reshape's target: 0 copies the input dim (unless allowzero), one -1 is inferred."""
    if any(is_sym(d) for d in in_shape) or any(is_sym(d) for d in shape):
        return _symbolic_reshape_target(in_shape, shape, allowzero)
    out = []
    for i, d in enumerate(shape):
        if d < -1:
            raise GraphError(f"Reshape: shape {shape} has {d}; dims must be >= -1")
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise GraphError(
                    f"Reshape: shape {shape} copies dim {i} (0), but the input {in_shape} has rank {len(in_shape)}"
                )
            d = in_shape[i]
        out.append(d)
    total = _size(in_shape)
    if out.count(-1) > 1:
        raise GraphError(f"Reshape: shape {shape} has more than one -1")
    if -1 in out:
        known = _size([d for d in out if d != -1])
        if known == 0:
            raise GraphError(f"Reshape: shape {shape} for input {in_shape}: -1 is ambiguous next to a zero dim")
        if total % known:
            raise GraphError(f"Reshape: cannot reshape {in_shape} ({total} elements) to {shape}")
        out[out.index(-1)] = total // known
    if _size(out) != total:
        raise GraphError(f"Reshape: cannot reshape {in_shape} ({total} elements) to {shape} ({_size(out)} elements)")
    return tuple(out)


def _symbolic_reshape_target(in_shape: tuple, shape: list, allowzero: int) -> tuple:
    """Reshape's target before resize: copied dims and the inferred -1 as expressions of symbols."""
    out = [
        in_shape[i] if not is_sym(d) and d == 0 and not allowzero and i < len(in_shape) else d
        for i, d in enumerate(shape)
    ]
    if -1 in [d for d in out if not is_sym(d)]:
        known = prod(d for d in out if is_sym(d) or d != -1)
        out = [prod(in_shape) // known if not is_sym(d) and d == -1 else d for d in out]
    return tuple(out)


def _reshape_samples(rng):
    cases = [
        ((2, 3, 4), [0, -1]),
        ((2, 3, 4), [4, -1, 3]),
        ((6,), [2, 3]),
        ((2, 3, 4), [-1]),
        ((2, 3, 4), [1, -1, 0]),
        ((0, 4), [0, 2, 2]),
        ((0, 4), [-1, 4]),
        ((1,), []),
        ((), [1, 1]),
    ]
    for shape, target in cases:
        yield Sample([rand(rng, *shape)], {"shape": target}, label=f"{shape} -> {target}")
    yield Sample([rand(rng, 0, 4)], {"shape": [4, 0], "allowzero": 1}, label="allowzero: a literal 0")
    yield Sample([rng.integers(-9, 9, size=(3, 4)).astype("int64")], {"shape": [2, 6]}, label="int64")


_view_op(
    "Reshape",
    lambda shape, attrs: reshape_target(shape, attrs["shape"], attrs["allowzero"]),
    _reshape_samples,
    "A new shape for the same elements: 0 copies the input dim, one -1 is inferred.",
    value_inputs={1: "shape"},
    attrs={
        "shape": Attr("ints", doc="target shape; 0 = copy, -1 = infer"),
        "allowzero": Attr("int", 0, (0, 1), "1: a 0 in `shape` is a zero-size dim, not a copy"),
    },
)


# -- Flatten ----------------------------------------------------------------------------


def _flatten_shape(shape, attrs):
    axis = attrs["axis"]
    if not -len(shape) <= axis <= len(shape):
        raise GraphError(f"Flatten: axis {axis} is out of range for rank {len(shape)}")
    axis += len(shape) if axis < 0 else 0
    return _size(shape[:axis]), _size(shape[axis:])


def _flatten_samples(rng):
    for shape, axis in [
        ((2, 3, 4, 5), 1),
        ((2, 3, 4, 5), 0),
        ((2, 3, 4, 5), 4),
        ((2, 3, 4, 5), -1),
        ((3, 7), -2),
        ((0, 3, 4), 1),
        ((5,), 1),
    ]:
        yield Sample([rand(rng, *shape)], {"axis": axis}, label=f"{shape} axis={axis}")


_view_op(
    "Flatten",
    _flatten_shape,
    _flatten_samples,
    "To 2-D: the dims before `axis` times the dims from it on.",
    attrs={"axis": Attr("int", 1)},
)


# -- Squeeze / Unsqueeze ---------------------------------------------------------------


def _squeeze_shape(shape, attrs):
    if attrs["axes"]:
        axes = _axes(attrs["axes"], len(shape), "Squeeze")
        bad = [a for a in axes if not is_sym(shape[a]) and shape[a] != 1]  # (a symbol may be 1)
        if bad:
            raise GraphError(
                f"Squeeze: axes {attrs['axes']} of {shape} must have size 1 (axis {bad[0]} has {shape[bad[0]]})"
            )
    else:
        axes = [i for i, d in enumerate(shape) if d == 1]
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _squeeze_samples(rng):
    for shape, attrs in [
        ((1, 3, 1, 5), {}),
        ((1, 3, 1, 5), {"axes": [0]}),
        ((1, 3, 1, 5), {"axes": [-2, 0]}),
        ((1,), {}),
        ((0, 1, 4), {"axes": [1]}),
        ((2, 3), {}),
    ]:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")


_view_op(
    "Squeeze",
    _squeeze_shape,
    _squeeze_samples,
    "Remove dims of size 1 (those in `axes`, or all).",
    value_inputs={1: "axes"},
    attrs={"axes": Attr("ints", [], doc="dims to remove; empty = every dim of size 1")},
)


def _unsqueeze_shape(shape, attrs):
    rank = len(shape) + len(attrs["axes"])
    axes = _axes(attrs["axes"], rank, "Unsqueeze")
    if not axes:
        raise GraphError("Unsqueeze: axes must name at least one axis")
    rest = iter(shape)
    return tuple(1 if i in axes else next(rest) for i in range(rank))


def _unsqueeze_samples(rng):
    for shape, axes in [
        ((3, 4), [0]),
        ((3, 4), [-1]),
        ((3, 4), [0, 3]),
        ((), [0]),
        ((0, 5), [1]),
        ((2, 3), [2, 0]),
        ((5,), [-1, -3]),
    ]:
        yield Sample([rand(rng, *shape)], {"axes": axes}, label=f"{shape} axes={axes}")


_view_op(
    "Unsqueeze",
    _unsqueeze_shape,
    _unsqueeze_samples,
    "Insert dims of size 1 at `axes` (of the output).",
    value_inputs={1: "axes"},
    attrs={"axes": Attr("ints", doc="positions in the output")},
)


# -- Transpose ---------------------------------------------------------------------------


def _perm(shape, attrs):
    perm = attrs["perm"] or list(range(len(shape)))[::-1]
    if sorted(perm) != list(range(len(shape))):
        raise GraphError(f"Transpose: perm {perm} is not a permutation of the {len(shape)} axes of {shape}")
    return perm


def _transpose_infer(ins, attrs):
    shape = ins[0].shape
    return [info_like(ins[0], tuple(shape[p] for p in _perm(shape, attrs)))]


def _transpose_samples(rng):
    for shape, perm in [
        ((2, 3, 4), []),
        ((2, 3, 4, 5), [0, 2, 3, 1]),
        ((5,), []),
        ((0, 3), [1, 0]),
        ((2, 3, 1, 4, 5), [4, 1, 3, 0, 2]),
        ((7, 9), []),
    ]:
        attrs = {"perm": perm} if perm else {}
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} perm={perm or 'reversed'}")


register(
    OpSchema(
        "Transpose",
        infer=_transpose_infer,
        reference=lambda ins, attrs: [np.ascontiguousarray(np.transpose(ins[0], _perm(ins[0].shape, attrs)))],
        attrs={"perm": Attr("ints", [], doc="output axis i is input axis perm[i]; default reversed")},
        samples=_transpose_samples,
        doc="Permute the axes.",
    )
)


# -- Concat / Split ----------------------------------------------------------------------


def _concat_infer(ins, attrs):
    if any(i is None for i in ins):
        raise GraphError("Concat: every input is required")
    dtype = same_dtype(ins, "Concat")
    first = ins[0].shape
    axis = normalize_axis(attrs["axis"], len(first), "Concat")
    merged = list(first)
    for x in ins[1:]:
        same = [unify(a, b) for a, b in zip(x.shape, merged)]
        if len(x.shape) != len(first) or any(d is None for i, d in enumerate(same) if i != axis):
            raise GraphError(f"Concat: shapes {first} and {x.shape} differ outside axis {attrs['axis']}")
        merged = same
    shape = tuple(merged[:axis]) + (sum(x.shape[axis] for x in ins),) + tuple(merged[axis + 1 :])
    return [TensorInfo(shape, dtype)]


def _concat_samples(rng):
    cases = [
        ([(2, 3), (4, 3)], 0),
        ([(2, 1, 4), (2, 5, 4), (2, 2, 4)], 1),
        ([(3, 2), (3, 7)], -1),
        ([(4, 5)], 0),
        ([(2, 0, 3), (2, 4, 3)], 1),
        ([(1, 2)] * 7, 0),
        ([(0, 2), (0, 3)], 1),
    ]
    for shapes, axis in cases:
        yield Sample([rand(rng, *s) for s in shapes], {"axis": axis}, label=f"{shapes} axis={axis}")
    ints = [rng.integers(-9, 9, size=s).astype("int64") for s in [(2, 2), (2, 3)]]
    yield Sample(ints, {"axis": 1}, label="int64")


register(
    OpSchema(
        "Concat",
        infer=_concat_infer,
        reference=lambda ins, attrs: [np.concatenate(ins, axis=attrs["axis"])],
        attrs={"axis": Attr("int")},
        n_inputs=(1, 1024),
        samples=_concat_samples,
        doc="Join inputs of one dtype along `axis`; the other dims must agree.",
    )
)

MAX_SPLIT_OUTPUTS = 64


def split_sizes(shape, attrs) -> tuple[int, list]:
    """The normalized axis and the size of each piece."""
    axis = normalize_axis(attrs["axis"], len(shape), "Split")
    dim = shape[axis]
    split, n = attrs["split"], attrs["num_outputs"]
    if split and n:
        raise GraphError("Split: give either `split` or `num_outputs`, not both")
    if split:
        if min(split) < 0 or sum(split) != dim:
            raise GraphError(
                f"Split: split {split} must be non-negative and sum to {dim} (axis {attrs['axis']} of {shape})"
            )
    elif n >= 1:
        chunk = -(-dim // n)  # as ONNX: equal pieces, the last one smaller
        split = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        if split[-1] < 0:
            raise GraphError(f"Split: axis {attrs['axis']} of {shape} (size {dim}) cannot make {n} pieces of {chunk}")
    else:
        raise GraphError("Split needs `split` (piece sizes) or `num_outputs` (a number of equal pieces)")
    if len(split) > MAX_SPLIT_OUTPUTS:
        raise GraphError(f"Split: {len(split)} pieces; at most {MAX_SPLIT_OUTPUTS} are supported")
    return axis, split


def _split_infer(ins, attrs):
    x = ins[0]
    axis, split = split_sizes(x.shape, attrs)
    return [info_like(x, x.shape[:axis] + (s,) + x.shape[axis + 1 :]) for s in split]


def _split_reference(ins, attrs):
    x = ins[0]
    axis, split = split_sizes(x.shape, attrs)
    return [p.copy() for p in np.split(x, np.cumsum(split)[:-1], axis=axis)]


def _split_samples(rng):
    cases = [
        ((6, 4), {"split": [2, 4]}),
        ((2, 9), {"axis": -1, "num_outputs": 3}),
        ((5, 7), {"axis": 1, "num_outputs": 3}),
        ((4, 6), {"split": [4]}),
        ((3, 2, 8), {"axis": 2, "split": [1, 5, 2]}),
        ((0, 6), {"axis": 1, "split": [3, 3]}),
        ((8,), {"num_outputs": 8}),
        ((4, 5), {"axis": 1, "split": [0, 3, 2]}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")


register(
    OpSchema(
        "Split",
        value_inputs={1: "split"},
        infer=_split_infer,
        reference=_split_reference,
        attrs={
            "axis": Attr("int", 0),
            "split": Attr("ints", [], doc="size of each piece"),
            "num_outputs": Attr("int", 0, doc="this many equal pieces (the last may be smaller)"),
        },
        n_outputs=MAX_SPLIT_OUTPUTS,
        samples=_split_samples,
        doc="Cut along `axis` into pieces of `split` sizes, or into `num_outputs` equal pieces.",
    )
)


# -- Slice -------------------------------------------------------------------------------


def slice_plan(shape, attrs) -> tuple[tuple, tuple]:
    """numpy slices and the output shape for ONNX Slice (clamped, negative steps allowed)."""
    starts, ends = attrs["starts"], attrs["ends"]
    axes = attrs["axes"] or list(range(len(starts)))
    steps = attrs["steps"] or [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise GraphError(f"Slice: starts {starts}, ends {ends}, axes {axes} and steps {steps} differ in length")
    slices = [slice(None)] * len(shape)
    out = list(shape)
    for axis, start, end, step in zip(_axes(axes, len(shape), "Slice"), starts, ends, steps):
        if step == 0:
            raise GraphError("Slice: a step of 0")
        dim = shape[axis]
        # clamp as the spec (and numpy) do; onnxruntime alone reads end = INT64_MAX with a
        # negative step as "through the first element"
        start, end = start + dim if start < 0 else start, end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:  # walking backwards: end may be -1, "before the first element"
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        out[axis] = max(0, -(-(end - start) // step))
        slices[axis] = slice(start, end if end >= 0 else None, step)
    return tuple(slices), tuple(out)


def _slice_infer(ins, attrs):
    return [info_like(ins[0], slice_plan(ins[0].shape, attrs)[1])]


def _slice_reference(ins, attrs):
    slices, shape = slice_plan(ins[0].shape, attrs)
    return [ins[0][slices].copy().reshape(shape)]


_BIG = 2**63 - 1


def _slice_samples(rng):
    cases = [
        ((10,), {"starts": [2], "ends": [8]}),
        ((5, 6), {"starts": [1, -4], "ends": [4, 100], "axes": [0, 1]}),
        ((10,), {"starts": [-1], "ends": [-_BIG], "steps": [-1]}),
        ((6, 7, 8), {"starts": [7, 5], "ends": [0, 0], "axes": [-1, 0], "steps": [-2, -2]}),
        ((6, 7, 8), {"starts": [1, 0], "ends": [_BIG, 5], "axes": [2, 1], "steps": [3, 2]}),
        ((5,), {"starts": [7], "ends": [10]}),
        ((4, 5), {"starts": [0], "ends": [-1], "axes": [1], "steps": [3]}),
        ((0, 5), {"starts": [1], "ends": [3], "axes": [1]}),
        ((3, 4), {"starts": [2], "ends": [-5], "axes": [0], "steps": [-1]}),
    ]
    for shape, attrs in cases:
        yield Sample([rand(rng, *shape)], attrs, label=f"{shape} {attrs}")


register(
    OpSchema(
        "Slice",
        value_inputs={1: "starts", 2: "ends", 3: "axes", 4: "steps"},
        infer=_slice_infer,
        reference=_slice_reference,
        attrs={
            "starts": Attr("ints"),
            "ends": Attr("ints", doc="exclusive; clamped to the dim"),
            "axes": Attr("ints", [], doc="default 0 .. len(starts) - 1"),
            "steps": Attr("ints", [], doc="default 1; negative walks backwards"),
        },
        samples=_slice_samples,
        doc="ONNX Slice with static starts/ends/axes/steps: clamped, negative indices and steps.",
    )
)


# -- Gather ------------------------------------------------------------------------------


def _gather_infer(ins, attrs):
    data, idx = ins
    if idx.dtype not in ("int64", "int32"):
        raise GraphError(f"Gather: indices must be int64 or int32, got {idx.dtype}")
    axis = normalize_axis(attrs["axis"], len(data.shape), "Gather")
    if not data.shape:
        raise GraphError("Gather: data must have rank 1 or more, got a scalar")
    if data.shape[axis] == 0 and idx.size:
        raise GraphError(f"Gather: axis {attrs['axis']} of {data.shape} is empty; no index is valid")
    return [info_like(data, data.shape[:axis] + idx.shape + data.shape[axis + 1 :])]


def _gather_reference(ins, attrs):
    data, idx = ins
    axis = attrs["axis"] % data.ndim
    dim = data.shape[axis]
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        raise IndexError(
            f"Gather: indices must lie in [{-dim}, {dim - 1}] for axis {axis} of {data.shape}, "
            f"got values from {idx.min()} to {idx.max()}"
        )
    return [np.take(data, np.where(idx < 0, idx + dim, idx).astype(np.int64), axis=axis)]


def _gather_samples(rng):
    yield Sample([rand(rng, 5, 4), np.array([0, 2, -1], dtype="int64")], {}, label="rows, negative index")
    indices = rng.integers(-6, 6, size=(2, 4)).astype("int32")
    yield Sample([rand(rng, 3, 6, 2), indices], {"axis": 1}, label="2-D int32 indices")
    yield Sample([rand(rng, 3, 4, 5), np.array([4, 0], dtype="int64")], {"axis": -1}, label="axis=-1")
    yield Sample([rand(rng, 7, 3), np.array(3, dtype="int64")], {}, label="scalar index drops the axis")
    yield Sample([rand(rng, 0, 4), np.array([1, 3], dtype="int64")], {"axis": 1}, label="empty batch")
    yield Sample([rand(rng, 6, 2), np.zeros((0,), dtype="int64")], {}, label="no indices")
    yield Sample(
        [rng.integers(0, 100, size=(10,)).astype("int64"), np.array([[9, 0], [-10, 5]], dtype="int64")],
        {},
        label="int64 data",
    )


register(
    OpSchema(
        "Gather",
        infer=_gather_infer,
        reference=_gather_reference,
        attrs={"axis": Attr("int", 0)},
        n_inputs=(2, 2),
        samples=_gather_samples,
        doc="Take entries along `axis` at int64/int32 indices (negative ones count from the end).",
    )
)

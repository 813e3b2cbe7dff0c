"""Data movement on x86 (ops_movement.py, csrc/movement/): every op against the reference backend, bit for
bit, on odd, size-1 and empty shapes, every attribute mode, several dtypes, at 1 and 2 threads (the large
cases cut into ranges for both threads)."""

from __future__ import annotations

import numpy as np
import pytest

from mnn_core.graph.ir import NUMPY_DTYPES
from mnn_core.ops import get_schema, run_reference
from mnn_core.session import Session
from mnn_core.testing import one_node_graph

DTYPES = ["float32", "int64", "bool", "float64", "float16", "uint8"]
BIG = 2**63 - 1
THREADS = pytest.mark.parametrize("threads", [1, 2])


def data(rng, shape, dtype="float32") -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)


def schema_cases(op: str) -> list[tuple[tuple, dict]]:
    """(input shape, attrs) of each of the op schema's own samples; a test adds its odd, size-1 and
    threaded cases after these."""
    return [(s.inputs[0].shape, s.attrs) for s in get_schema(op).samples(np.random.default_rng(0))]


def session(op, inputs, attrs, n_out=1, threads=1) -> tuple[Session, dict]:
    graph, feeds = one_node_graph(op, inputs, attrs, outputs=[f"out{i}" for i in range(n_out)])
    return Session(graph, backend="x86", fallback=False, optimize=False, threads=threads), feeds


def check(op, inputs, attrs, threads=1):
    """x86 against the reference: same shapes, dtypes and bits, on two runs of one session."""
    want = run_reference(op, list(inputs), attrs)
    sess, feeds = session(op, inputs, attrs, len(want), threads)
    for _ in range(2):
        got = sess.run(feeds)
        for i, w in enumerate(want):
            g = got[f"out{i}"]
            assert (g.shape, g.dtype) == (w.shape, w.dtype), f"{op} {attrs}: {g.shape} {g.dtype} vs {w.shape} {w.dtype}"
            np.testing.assert_array_equal(g, w, err_msg=f"{op} {attrs} output {i}")


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# -- strided copies ---------------------------------------------------------------------------------


SLICES = [
    *schema_cases("Slice"),
    ((1, 9, 1, 3), {"starts": [0, 1], "ends": [1, 8], "axes": [2, 1], "steps": [1, 2]}),
    ((300, 301), {"starts": [3, 1], "ends": [297, 300], "axes": [0, 1]}),  # threaded
    ((257, 129), {"starts": [-1], "ends": [-BIG], "axes": [1], "steps": [-1]}),
]


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,attrs", SLICES)
def test_slice(rng, threads, dtype, shape, attrs):
    check("Slice", [data(rng, shape, dtype)], attrs, threads)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,attrs",
    [
        *schema_cases("Split"),
        ((300, 257), {"axis": 1, "split": [100, 157]}),
        ((512, 130), {"axis": 0, "num_outputs": 2}),
    ],
)
def test_split(rng, threads, dtype, shape, attrs):
    check("Split", [data(rng, shape, dtype)], attrs, threads)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,attrs",
    [
        *schema_cases("Expand"),
        ((1, 7), {"shape": [3, 1, 1]}),
        ((300, 1), {"shape": [300, 257]}),
        ((1, 301), {"shape": [256, 301]}),
    ],
)
def test_expand(rng, threads, dtype, shape, attrs):
    check("Expand", [data(rng, shape, dtype)], attrs, threads)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,reps",
    [
        ((2, 3), [2, 2]),
        ((3,), [4]),
        ((2, 1, 3), [1, 3, 0]),
        ((1, 4), [3, 1]),
        ((0, 3), [2, 2]),
        ((3, 5, 1), [1, 1, 7]),
        ((130, 67), [3, 5]),
    ],
)
def test_tile(rng, threads, dtype, shape, reps):
    check("Tile", [data(rng, shape, dtype)], {"repeats": reps}, threads)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op,shape,attrs",
    [
        ("DepthToSpace", (1, 8, 2, 3), {"blocksize": 2}),
        ("DepthToSpace", (2, 9, 2, 2), {"blocksize": 3, "mode": "CRD"}),
        ("DepthToSpace", (2, 12, 3, 5), {"blocksize": 2, "mode": "DCR"}),
        ("DepthToSpace", (1, 64, 33, 31), {"blocksize": 4, "mode": "CRD"}),
        ("SpaceToDepth", (1, 2, 4, 6), {"blocksize": 2}),
        ("SpaceToDepth", (2, 3, 9, 6), {"blocksize": 3}),
        ("SpaceToDepth", (1, 16, 128, 64), {"blocksize": 4}),
    ],
)
def test_depth_space(rng, threads, dtype, op, shape, attrs):
    check(op, [data(rng, shape, dtype)], attrs, threads)


# -- Where, Pad, Cast -----------------------------------------------------------------------------------


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shapes",
    [
        ((4, 5), (4, 5), (4, 5)),
        ((2, 1, 3), (2, 1, 3), (3,)),
        ((1,), (3, 1), (1, 4)),
        ((), (2, 3), ()),
        ((0, 3), (1, 3), (3,)),
        ((5, 1, 7), (1, 6, 1), (5, 6, 7)),
        ((300, 1), (300, 257), (257,)),
    ],
)
def test_where(rng, threads, dtype, shapes):
    cond, x, y = shapes
    check("Where", [rng.random(cond) > 0.5, data(rng, x, dtype), data(rng, y, dtype)], {}, threads)


PADS = [
    ((3, 4), [1, 2, 0, 1]),
    ((2, 3, 4, 5), [0, 0, 1, 2, 0, 0, 2, 1]),
    ((2, 3, 4, 5), [0, 1, 3, 0, 0, 0, 1, 4]),
    ((3, 5), [2, 1, 1, 3]),
    ((4, 6), [0, -1, 1, 2]),
    ((1, 3), [0, 0, 0, 0]),
    ((7,), [3, 2]),
    ((5, 7), [-2, 3, 1, -3]),
    ((300, 263), [2, 3, 1, 4]),
]


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("shape,pads", PADS)
def test_pad(rng, threads, dtype, mode, shape, pads):
    check("Pad", [data(rng, shape, dtype)], {"pads": pads, "mode": mode, "value": 2.5}, threads)


@pytest.mark.parametrize("shape,pads", [((0, 3), [0, 1, 0, 1]), ((1, 3), [1, 0, -2, 0]), ((2, 2), [3, 0, 0, 4])])
def test_pad_constant_only(rng, shape, pads):
    """Pads that only constant mode allows: an empty axis, more than the axis holds."""
    check("Pad", [data(rng, shape)], {"pads": pads, "value": -1.0})


def cast_source(rng, src: str, to: str) -> np.ndarray:
    """Values every cast from src to to defines (numpy leaves floats out of an int's range undefined)."""
    x = data(rng, (7, 33), src)
    if np.dtype(src).kind == "f":
        x = (rng.standard_normal((7, 33)) * 40).astype(src)
        x[0, :4] = [0.0, -0.0, 0.5, -0.75]
        if np.dtype(to).kind == "u" or to == "int8":
            x = np.abs(x) % 100
    return x


@THREADS
@pytest.mark.parametrize("to", NUMPY_DTYPES)
@pytest.mark.parametrize("src", NUMPY_DTYPES)
def test_cast(rng, threads, src, to):
    check("Cast", [cast_source(rng, src, to)], {"to": to}, threads)


@pytest.mark.parametrize(
    "src,to,values",
    [
        ("int32", "int8", [300, -129, 127, 128]),
        ("int64", "uint16", [-1, 70000, 5]),
        ("float32", "float16", [1e5, 1e-8]),
        ("float64", "float32", [1e300, 1e-300, np.nan]),
        ("float32", "bool", [np.nan, 0.0, -0.0, 1e-30]),
        ("uint64", "float32", [2**64 - 1, 2**53 + 1]),
        ("int64", "float16", [65504, 2049, -7]),
    ],
)
def test_cast_edges(src, to, values):
    """Wrapping, overflow to inf, NaN and rounding: as numpy's astype."""
    check("Cast", [np.array(values, dtype=src)], {"to": to})


def test_cast_threaded(rng):
    x = (rng.standard_normal((512, 300)) * 100).astype(np.float32)
    for to in ("int32", "float16", "float64", "bool"):
        check("Cast", [x], {"to": to}, threads=2)


# -- index ops ------------------------------------------------------------------------------------------


def indices(rng, shape, dim, dtype="int64") -> np.ndarray:
    """Valid indices into an axis of `dim`, negative ones among them."""
    return rng.integers(-dim, dim, size=shape).astype(dtype)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    "shape,axis,idx_shape",
    [
        ((5, 4), 0, (3,)),
        ((3, 6, 2), 1, (2, 4)),
        ((3, 4, 5), -1, (2,)),
        ((7, 3), 0, ()),
        ((0, 4), 1, (2,)),
        ((6, 2), 0, (0,)),
        ((1, 1, 9), 2, (4, 1, 3)),
        ((1000, 64), 0, (700,)),
        ((64, 3000), 1, (2, 300)),
    ],
)
def test_gather(rng, threads, dtype, idx_dtype, shape, axis, idx_shape):
    check(
        "Gather",
        [data(rng, shape, dtype), indices(rng, idx_shape, shape[axis] or 1, idx_dtype)],
        {"axis": axis},
        threads,
    )


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,axis,along",
    [
        ((3, 4), 0, 2),
        ((2, 5, 3), 1, 7),
        ((4, 1, 6), -1, 6),
        ((3, 4), 1, 0),
        ((200, 300), 1, 300),
    ],
)
def test_gather_elements(rng, threads, dtype, shape, axis, along):
    idx_shape = list(shape)
    idx_shape[axis] = along
    check("GatherElements", [data(rng, shape, dtype), indices(rng, idx_shape, shape[axis])], {"axis": axis}, threads)


def nd_indices(rng, idx_shape, dims) -> np.ndarray:
    """Tuples of idx_shape[-1] valid indices into dims, negative ones among them."""
    idx = np.zeros(idx_shape, np.int64)
    for q in range(idx_shape[-1]):
        idx[..., q] = indices(rng, idx_shape[:-1], dims[q])
    return idx


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,idx_shape,batch_dims",
    [
        ((2, 2), (2, 2), 0),
        ((2, 3, 4), (2, 1), 0),
        ((2, 3, 4), (2, 2), 1),
        ((2, 3, 4, 5), (2, 3, 4, 1), 2),
        ((3, 4, 5), (2, 2, 3), 0),
        ((400, 300), (2, 250, 1), 0),
    ],
)
def test_gather_nd(rng, threads, dtype, shape, idx_shape, batch_dims):
    idx = nd_indices(rng, idx_shape, shape[batch_dims:])
    check("GatherND", [data(rng, shape, dtype), idx], {"batch_dims": batch_dims}, threads)


REDUCE_DTYPES = ["float32", "int64", "bool", "float64", "float16", "uint8", "int32"]


@pytest.mark.parametrize("dtype", REDUCE_DTYPES)
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("shape,axis,along", [((3, 3), 0, 2), ((1, 5), 1, 2), ((4, 3, 5), 1, 9), ((6, 7), -1, 7)])
def test_scatter_elements(rng, dtype, reduction, shape, axis, along):
    """Repeated indices: the updates land in order, as numpy's (none: the last wins)."""
    idx_shape = list(shape)
    idx_shape[axis] = along
    idx = indices(rng, idx_shape, shape[axis])
    x, upd = data(rng, shape, dtype), data(rng, idx_shape, dtype)
    if dtype == "uint8" and reduction == "mul":
        x, upd = x % 4, upd % 4  # stays in range
    check("ScatterElements", [x, idx, upd], {"axis": axis, "reduction": reduction})


def test_scatter_legacy(rng):
    check("Scatter", [data(rng, (3, 4)), np.array([[1, 0, 2, 1]]), data(rng, (1, 4))], {"axis": 0})


@pytest.mark.parametrize("dtype", REDUCE_DTYPES)
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize(
    "shape,idx_shape", [((8,), (4, 1)), ((4, 4, 4), (3, 1)), ((4, 5, 6), (2, 3, 2)), ((3, 4), (5, 2))]
)
def test_scatter_nd(rng, dtype, reduction, shape, idx_shape):
    idx = nd_indices(rng, idx_shape, shape)
    x, upd = data(rng, shape, dtype), data(rng, idx_shape[:-1] + shape[idx_shape[-1] :], dtype)
    if dtype == "uint8" and reduction == "mul":
        x, upd = x % 4, upd % 4
    check("ScatterND", [x, idx, upd], {"reduction": reduction})


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", ["int64", "int32", "float32"])
@pytest.mark.parametrize(
    "idx_shape,depth,axis", [((4,), 3, -1), ((2, 2), 5, 0), ((3, 1, 2), 4, 1), ((0, 3), 2, -1), ((300, 40), 20, 1)]
)
def test_onehot(rng, threads, dtype, idx_dtype, idx_shape, depth, axis):
    idx = rng.integers(-depth - 2, depth + 2, size=idx_shape).astype(idx_dtype)  # some outside: all off
    check("OneHot", [idx, data(rng, (2,), dtype)], {"depth": depth, "axis": axis}, threads)


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,batch_axis,time_axis", [((4, 3, 2), 1, 0), ((3, 5), 0, 1), ((6, 2, 3, 2), 1, 0), ((300, 4, 80), 1, 0)]
)
def test_reverse_sequence(rng, threads, dtype, shape, batch_axis, time_axis):
    lens = rng.integers(0, shape[time_axis] + 1, size=shape[batch_axis])
    check(
        "ReverseSequence", [data(rng, shape, dtype), lens], {"batch_axis": batch_axis, "time_axis": time_axis}, threads
    )


@THREADS
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize(
    "shape,k", [((4, 5), 0), ((2, 3, 5), 1), ((3, 4), -1), ((0, 5), 0), ((5, 3), 7), ((3, 6), -9), ((2, 300, 301), 2)]
)
def test_trilu(rng, threads, dtype, upper, shape, k):
    check("Trilu", [data(rng, shape, dtype)], {"upper": upper, "k": k}, threads)


@pytest.mark.parametrize("out_dtype", ["", "int32", "float16", "bool", "float64"])
@pytest.mark.parametrize("shape,k", [((4, 5), 0), ((3, 3), 1), ((5, 3), -2), ((2, 4), 9), ((0, 3), 0)])
def test_eyelike(rng, out_dtype, shape, k):
    check("EyeLike", [data(rng, shape)], {"k": k, "dtype": out_dtype})


@pytest.mark.parametrize(
    "op,inputs,attrs",
    [
        ("Gather", [np.zeros((3, 4), np.float32), np.array([0, 3], np.int64)], {"axis": 0}),
        ("Gather", [np.zeros((3, 4), np.float32), np.array([-5], np.int32)], {"axis": 1}),
        ("GatherElements", [np.zeros((3, 4), np.float32), np.array([[0, 1, 2, 3]])], {"axis": 0}),
        ("GatherND", [np.zeros((3, 4), np.float32), np.array([[1, 4]])], {}),
        ("ScatterND", [np.zeros((3, 4), np.float32), np.array([[-4]]), np.zeros((1, 4), np.float32)], {}),
        (
            "ScatterElements",
            [np.zeros((3, 4), np.float32), np.array([[0, 9]]), np.zeros((1, 2), np.float32)],
            {"axis": 1},
        ),
    ],
)
def test_out_of_range_indices_fail(op, inputs, attrs):
    """A bad index stops the run with a message naming it; nothing outside the data is read."""
    sess, feeds = session(op, inputs, attrs)
    with pytest.raises(Exception, match=f"x86 {op}: index -?\\d+ .*outside"):
        sess.run(feeds)


# -- Concat and Transpose of 8- and 2-byte elements (ops_layout.py) ---------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float16", "int16", "int64", "bool"])
@pytest.mark.parametrize("threads", [1, 2])
def test_concat_transpose_element_sizes(rng, dtype, threads):
    a, b = data(rng, (3, 5, 7), dtype), data(rng, (3, 2, 7), dtype)
    check("Concat", [a, b], {"axis": 1}, threads)
    check("Concat", [data(rng, (200, 300), dtype), data(rng, (200, 300), dtype)], {"axis": 0}, threads)
    check("Transpose", [a], {"perm": [2, 0, 1]}, threads)
    check("Transpose", [data(rng, (2, 300, 400), dtype)], {"perm": [0, 2, 1]}, threads)


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8", "int64"])
@pytest.mark.parametrize("threads", [1, 2])
def test_concat_short_rows(rng, dtype, threads):
    """Rows of at most 256 bytes (op_layout.c: concat_rows): single elements stacked on a new last axis
    (torch.stack), blocks of odd sizes, an empty input, enough rows for both threads."""
    cols = [data(rng, (24, 64, 1), dtype) for _ in range(3)]
    check("Concat", cols, {"axis": 2}, threads)
    check(
        "Concat",
        [data(rng, (3000, 1), dtype), data(rng, (3000, 5), dtype), data(rng, (3000, 2), dtype)],
        {"axis": 1},
        threads,
    )
    check("Concat", [data(rng, (7, 0, 3), dtype), data(rng, (7, 3, 3), dtype)], {"axis": 1}, threads)


def test_scatter_elements_smaller_indices(rng):
    """Indices smaller than the data off the axis update its first entries there."""
    check("ScatterElements", [data(rng, (5, 6)), indices(rng, (2, 3), 6), data(rng, (2, 3))], {"axis": 1})


@pytest.mark.parametrize("threads", [1, 2])
def test_cast_bfloat16(rng, threads):
    """float32 -> bfloat16 rounds to nearest even (ties, carries into the exponent, overflow to inf, NaN
    stays NaN); bfloat16 -> float32 is exact."""
    pytest.importorskip("ml_dtypes")
    x = (rng.standard_normal(200_000) * 100).astype(np.float32)
    bits = np.array(
        [0x3F808000, 0x3F818000, 0x3F80FFFF, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0x00000001, 0x80000000],
        np.uint32,
    )
    x[: bits.size] = bits.view(np.float32)
    check("Cast", [x], {"to": "bfloat16"}, threads)
    check("Cast", [x.astype("bfloat16")], {"to": "float32"}, threads)

"""The .mnn container: round trips, zero-copy loading, atomic saves, and hostile files.

The container is parsed here independently of mnn_core.format, from the layout
in docs/FORMAT.md, so these tests also pin the documented byte layout. Version 1
files (plain JSON, every tensor 64-byte aligned) are the fixtures in tests/data,
written by the last mnn that wrote version 1.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import mmap
import os
import zlib

import numpy as np
import pytest
from mnn_file_layout import V1_FIXTURES, error_of, load_bytes, make_graph, pack, parse

from mnn_core import format as mnnfmt
from mnn_core.errors import GraphError, MnnFormatError
from mnn_core.format import load_mnn, save_mnn
from mnn_core.graph.ir import DTYPES, Graph, Node, TensorInfo


@pytest.fixture(scope="module")
def graph() -> Graph:
    g = make_graph()
    g.validate()  # what save_mnn stores: node names and default attributes filled in
    return g


def assert_same_structure(a: Graph, b: Graph) -> None:
    assert (a.name, a.inputs, a.outputs) == (b.name, b.inputs, b.outputs)
    assert [(n.op, n.name, n.inputs, n.outputs, n.attrs) for n in a.nodes] == [
        (n.op, n.name, n.inputs, n.outputs, n.attrs) for n in b.nodes
    ]
    assert list(a.initializers) == list(b.initializers)


# -- round trips ----------------------------------------------------------------------


def test_fp32_round_trip_is_bit_exact(tmp_path, graph):
    path = tmp_path / "m.mnn"
    save_mnn(make_graph(), path)
    for use_mmap in (True, False):
        back = load_mnn(path, mmap=use_mmap)
        assert_same_structure(graph, back)
        assert back.metadata == {**graph.metadata, "mnn.weights": "fp32"}
        assert back.nodes[1].attrs["min"] == -math.inf
        assert back.inputs["x"].shape == ("N", 3, 8, 8)
        for name, want in graph.initializers.items():
            got = back.initializers[name]
            assert (got.dtype, got.shape, got.tobytes()) == (want.dtype, want.shape, want.tobytes()), name


def test_fp16_round_trip(tmp_path, graph):
    path = tmp_path / "m.mnn"
    save_mnn(graph, path, weights="fp16")
    storage = {k: v["storage"] for k, v in parse(path.read_bytes())[1]["tensors"].items()}
    assert storage["conv.w"] == storage["small2d"] == "fp16"
    assert storage["huge"] == storage["steps"] == storage["half"] == "raw"
    back = load_mnn(path)
    assert_same_structure(graph, back)
    assert back.metadata["mnn.weights"] == "fp16"
    for name, want in graph.initializers.items():
        got = back.initializers[name]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7 if want.dtype == np.float32 else 0)


def test_int8_round_trip_is_within_half_a_step(tmp_path, graph):
    path = tmp_path / "m.mnn"
    save_mnn(graph, path, weights="int8")
    storage = {k: v["storage"] for k, v in parse(path.read_bytes())[1]["tensors"].items()}
    assert storage["conv.w"] == storage["fc.w"] == "int8"
    assert storage["conv.b"] == storage["small2d"] == storage["steps"] == "raw"
    back = load_mnn(path)
    assert_same_structure(graph, back)
    assert back.metadata["mnn.weights"] == "int8"
    for name, want in graph.initializers.items():
        got = back.initializers[name]
        assert got.dtype == want.dtype and got.shape == want.shape
        if storage[name] == "raw":
            assert got.tobytes() == want.tobytes()
            continue
        scale = np.abs(want.reshape(len(want), -1)).max(axis=1) / 127
        err = np.abs(got - want).reshape(len(want), -1)
        assert (err <= scale[:, None] / 2 * (1 + 1e-5) + 1e-12).all(), name
    assert not back.initializers["conv.w"][5].any()  # the zero channel stays exactly zero


@pytest.mark.parametrize(
    "value",
    [
        3,
        -(2**63),
        0.1,
        -math.inf,
        math.inf,
        math.nan,
        True,
        "SAME_UPPER",
        "",
        [],
        [1, -2],
        [0.5, -math.inf, math.nan],
        ["a", "b"],
        np.array([[1.0, np.nan], [-np.inf, 2.0]], np.float32),
        np.arange(6, dtype=np.int64).reshape(2, 3),
        np.zeros((0, 3), np.float16),
        np.array(7, np.int8),
        np.array([True, False]),
    ],
)
def test_every_attribute_kind_round_trips_exactly(value):
    encoded = json.dumps(mnnfmt._encode_attr("a", value), allow_nan=False)  # strict JSON: no NaN/Infinity
    back = mnnfmt._attr(json.loads(encoded), "a")
    if isinstance(value, np.ndarray):
        assert (back.dtype, back.shape, back.tobytes()) == (value.dtype, value.shape, value.tobytes())
    else:
        assert type(back) is type(value)
        assert repr(back) == repr(value)  # nan == nan, -inf and 0.1 exactly


def test_quantize_int8_scale_and_zero_channel():
    w = np.array([[0.0, 0.0], [-2.54, 1.27]], np.float32)
    q, scales = mnnfmt.quantize_int8(w)
    assert scales.tolist() == [0.0, np.float32(2.54 / 127)] and q.tolist() == [[0, 0], [-127, 64]]


def test_save_rejects_what_it_cannot_store(tmp_path, graph):
    with pytest.raises(MnnFormatError, match="weights must be one of"):
        save_mnn(graph, tmp_path / "m.mnn", weights="bf16")
    bad = graph.copy()
    bad.initializers["conv.b"] = bad.initializers["conv.b"].astype(np.complex64)
    with pytest.raises(MnnFormatError, match="dtype complex64"):
        save_mnn(bad, tmp_path / "m.mnn")
    bad = graph.copy()
    bad.nodes[0].inputs[1] = "nope"
    with pytest.raises(GraphError, match="nope"):
        save_mnn(bad, tmp_path / "m.mnn")
    assert not os.listdir(tmp_path)


# -- every dtype, version 1 files, the version 2 layout ----------------------------------


def every_dtype_graph() -> Graph:
    """A small (< 64 bytes) and a large initializer of every dtype .mnn stores, random bits, plus two
    float32 weights that fp16/int8 storage converts (one with 8 output channels: int8 scales of 32 bytes)."""
    rng = np.random.default_rng(3)
    inits = {}
    for dtype in DTYPES:
        dt = np.dtype(dtype)
        for label, count in (("small", 3), ("large", 67)):  # 67: large tensors that end off a 64-byte boundary
            if dtype == "bool":
                arr = rng.integers(0, 2, count).astype(bool)
            else:
                arr = rng.integers(0, 256, count * dt.itemsize, dtype=np.uint8).view(dt)
            if dtype == "float32":
                arr[0] = 1e30  # beyond fp16: stays raw in every mode, so its bits must come back exactly
            inits[f"{dtype}.{label}"] = arr
    inits["float32.w"] = rng.standard_normal((20, 16)).astype(np.float32)
    inits["float32.w8"] = rng.standard_normal((8, 40)).astype(np.float32)
    return Graph(
        inputs={"x": TensorInfo(("N", 4))},
        outputs=["y"],
        nodes=[Node("Relu", ["x"], ["y"], {}, "relu")],
        initializers=inits,
    )


def tensor_extents(doc: dict) -> list[tuple[str, int, int]]:
    """(label, offset, nbytes) of every array stored in the data section."""
    out = []
    for name, t in doc["tensors"].items():
        out.append((name, t["offset"], t["nbytes"]))
        if "scales_offset" in t:
            out.append((f"{name} scales", t["scales_offset"], t["scales_nbytes"]))
    return out


@pytest.mark.parametrize("use_mmap", [True, False], ids=["mmap", "read"])
@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
def test_every_dtype_round_trips(tmp_path, weights, use_mmap):
    g = every_dtype_graph()
    path = tmp_path / "m.mnn"
    save_mnn(g, path, weights=weights)
    storage = {k: v["storage"] for k, v in parse(path.read_bytes())[1]["tensors"].items()}
    converted = set() if weights == "fp32" else {"float32.w", "float32.w8"}
    assert {k for k, v in storage.items() if v != "raw"} == converted
    back = load_mnn(path, mmap=use_mmap)
    for name, want in g.initializers.items():
        got = back.initializers[name]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        if storage[name] != "raw":
            np.testing.assert_allclose(got, want, rtol=0, atol=np.abs(want).max() / 127 / 2 * 1.0001)
            continue
        assert got.tobytes() == want.tobytes(), name
        assert mapped(got) == use_mmap and got.flags.aligned, name
        if use_mmap:  # the view's alignment is the file's: large tensors 64, small ones 8
            assert got.ctypes.data % (64 if got.nbytes >= 64 else 8) == 0, name


@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
def test_version_1_files_written_by_earlier_mnn_still_load(tmp_path, graph, weights):
    blob = V1_FIXTURES[weights].read_bytes()
    fields, doc, _ = parse(blob)
    assert fields[1] == 1 and fields[3] == 64  # really the old layout: plain JSON at 64, every tensor 64-aligned
    assert all(off % 64 == 0 for _, off, _ in tensor_extents(doc))
    assert any(0 < n < 64 for _, _, n in tensor_extents(doc))
    save_mnn(graph, tmp_path / "v2.mnn", weights=weights)
    now = load_mnn(tmp_path / "v2.mnn")
    for use_mmap in (True, False):
        old = load_mnn(V1_FIXTURES[weights], mmap=use_mmap)
        assert_same_structure(graph, old)
        assert old.metadata == now.metadata
        for name, want in now.initializers.items():  # the same values as today's writer and reader give
            got = old.initializers[name]
            assert (got.dtype, got.shape, got.tobytes()) == (want.dtype, want.shape, want.tobytes()), name


def test_version_1_rules_stay_version_1_rules(tmp_path):
    """A small tensor at an 8- but not 64-aligned offset is an error in a version 1 file, fine in version 2."""
    blob = V1_FIXTURES["fp32"].read_bytes()
    _, doc, data_off = parse(blob)
    doc["tensors"]["huge"]["offset"] += 8  # into its own padding (8 bytes; the next tensor starts 64 on)
    text = json.dumps(doc).encode()
    message = error_of(tmp_path, pack(text, blob[data_off:], version=1))
    assert "tensors['huge'] at offset" in message and "at a multiple of 64 (version 1 rule for 8 bytes)" in message
    back = load_bytes(tmp_path, pack(text, blob[data_off:], version=2))
    assert back.initializers["huge"].tobytes() == bytes(8)  # the zero padding it now points at


def test_version_2_layout(tmp_path, graph):
    """JSON compressed right after the header; large tensors 64-aligned first, then small ones packed at 8."""
    path = tmp_path / "m.mnn"
    save_mnn(graph, path, weights="int8")
    blob = path.read_bytes()
    fields, doc, data_off = parse(blob)
    _, version, flags, json_off, json_size, _, data_size, json_crc, _ = fields
    assert (version, flags, json_off, data_off % 64, data_off + data_size) == (2, 0, 56, 0, len(blob))
    stored = blob[json_off : json_off + json_size]
    assert zlib.crc32(stored) == json_crc and json_size < len(zlib.decompress(stored)) / 2
    extents = tensor_extents(doc)
    large = [(off, n) for _, off, n in extents if n >= 64]
    small = [(off, n) for _, off, n in extents if n < 64]
    assert all(off % 64 == 0 for off, _ in large) and all(off % 8 == 0 for off, _ in small)
    assert any(off % 64 for off, _ in small)  # packed, not padded to 64
    assert max(off + n for off, n in large) <= min(off for off, _ in small)
    assert len(blob) < 0.7 * V1_FIXTURES["int8"].stat().st_size  # the same graph, the same int8 storage


# -- zero copy and the memory map -------------------------------------------------------


def mapped(arr: np.ndarray) -> bool:
    base = arr
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(getattr(base, "obj", base), mmap.mmap)


def test_mmap_load_is_zero_copy_and_read_only(tmp_path, graph):
    path = tmp_path / "m.mnn"
    save_mnn(graph, path)
    before = hashlib.sha256(path.read_bytes()).digest()
    back = load_mnn(path, mmap=True)
    w = back.initializers["conv.w"]
    assert not w.flags.owndata and not w.flags.writeable and mapped(w)
    assert w.ctypes.data % 64 == 0  # tensors are 64-byte aligned in the file, so in the map
    steps = back.initializers["steps"]  # 24 bytes: packed at 8-byte alignment, still a view
    assert mapped(steps) and steps.ctypes.data % 8 == 0 and steps.flags.aligned
    with pytest.raises(ValueError):
        w[0, 0, 0, 0] = 1.0
    del back
    gc.collect()  # the graph is gone: the array alone keeps the map alive
    assert w.tobytes() == graph.initializers["conv.w"].tobytes()
    save_mnn(make_graph(), path, weights="fp16")  # atomic replace: the old mapping stays valid
    assert w.tobytes() == graph.initializers["conv.w"].tobytes()
    del w
    gc.collect()
    save_mnn(graph, path)
    assert hashlib.sha256(path.read_bytes()).digest() == before


def test_mmap_false_gives_ordinary_arrays(tmp_path, graph):
    path = tmp_path / "m.mnn"
    save_mnn(graph, path)
    w = load_mnn(path, mmap=False).initializers["conv.w"]
    assert w.flags.writeable and not mapped(w)


# -- atomic save ----------------------------------------------------------------------------


def test_failed_save_leaves_the_old_file_intact(tmp_path, graph, monkeypatch):
    path = tmp_path / "m.mnn"
    save_mnn(graph, path)
    old = path.read_bytes()
    calls = []

    def failing_write(f, arr):
        calls.append(arr)
        if len(calls) == 3:
            f.write(b"partial")
            raise OSError(28, "No space left on device")
        f.write(arr.reshape(-1).view(np.uint8))

    monkeypatch.setattr(mnnfmt, "_write_array", failing_write)
    with pytest.raises(OSError, match="No space"):
        save_mnn(graph, path, weights="fp16")
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["m.mnn"]  # the temp file is cleaned up
    assert load_mnn(path).metadata["mnn.weights"] == "fp32"

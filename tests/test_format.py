"""The .mnn container: round trips, zero-copy loading, atomic saves, and hostile files.

The container is parsed here independently of mnn_core.format, from the layout
in docs/FORMAT.md, so these tests also pin the documented byte layout. Version 1
files (plain JSON, every tensor 64-byte aligned) are the fixtures in tests/data,
written by the last mnn that wrote version 1.
"""

from __future__ import annotations

import copy
import gc
import gzip
import hashlib
import json
import math
import mmap
import os
import random
import struct
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

from mnn_core import format as mnnfmt
from mnn_core.errors import GraphError, MnnFormatError
from mnn_core.format import load_mnn, save_mnn
from mnn_core.graph.ir import DTYPES, Graph, Node, TensorInfo

HEADER = struct.Struct("<8sIIQQQQII")  # docs/FORMAT.md: magic .. json_crc, header_crc
DATA = Path(__file__).parent / "data"
V1_FIXTURES = {w: DATA / f"tiny_v1_{w}.mnn" for w in ("fp32", "fp16", "int8")}


def make_graph() -> Graph:
    rng = np.random.default_rng(7)
    conv_w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    conv_w[5] = 0.0  # an all-zero output channel: int8 scale 0
    return Graph(
        name="tiny",
        inputs={"x": TensorInfo(("N", 3, 8, 8)), "v": TensorInfo(("N", 32))},
        outputs=["y", "z"],
        nodes=[
            Node(
                "Conv",
                ["x", "conv.w", "conv.b"],
                ["c"],
                {"pads": [1, 1, 1, 1], "strides": [2, 2], "activation": "relu"},
                "conv",
            ),
            Node("Clip", ["c"], ["y"], {"min": -math.inf, "max": 6.0}, "clip"),
            Node("Gemm", ["v", "fc.w", "fc.b"], ["g"], {"alpha": 0.5, "transB": 0}, "fc"),
            Node("LeakyRelu", ["g"], ["z"], {"alpha": 0.125}, ""),  # unnamed: validate names it
        ],
        initializers={
            "conv.w": conv_w,
            "conv.b": rng.standard_normal(16).astype(np.float32),
            "fc.w": rng.standard_normal((32, 24)).astype(np.float32),
            "fc.b": rng.standard_normal(24).astype(np.float32),
            "small2d": rng.standard_normal((4, 4)).astype(np.float32),  # < 256 elements: stays fp32
            "huge": np.array([1e6, -3.0], np.float32),  # beyond fp16 range: stays fp32 in fp16 mode
            "steps": np.array([1, 2, 3], np.int64),
            "mask": np.array([True, False, True]),
            "half": np.array([0.5, 1.5], np.float16),
            "scalar": np.float32(2.5) * np.ones((), np.float32),
        },
        metadata={"producer": "test", "note": "ünïcode"},
    )


def parse(blob: bytes) -> tuple[tuple, dict, int]:
    """(header fields, JSON doc, data offset) read the way docs/FORMAT.md describes."""
    fields = HEADER.unpack_from(blob)
    _, version, _, json_off, json_size, data_off, _, _, _ = fields
    stored = blob[json_off : json_off + json_size]
    return fields, json.loads(zlib.decompress(stored) if version >= 2 else stored), data_off


def pack(doc_bytes: bytes, data: bytes, *, version: int = 2, flags: int = 0, stored: bytes | None = None) -> bytes:
    """A container with correct checksums around JSON text and data bytes.

    Version 2 stores the text zlib-compressed (`stored`, if given, is put in as it is instead), version 1 plain.
    """
    if stored is None:
        stored = zlib.compress(doc_bytes) if version >= 2 else doc_bytes
    json_off = 56 if version >= 2 else 64
    data_off = -(-(json_off + len(stored)) // 64) * 64
    head = struct.pack(
        "<8sIIQQQQI", b"MNNMODEL", version, flags, json_off, len(stored), data_off, len(data), zlib.crc32(stored)
    )
    head += struct.pack("<I", zlib.crc32(head))
    return head.ljust(json_off, b"\0") + stored.ljust(data_off - json_off, b"\0") + data


def with_header_field(blob: bytes, index: int, value: int, fix_crc: bool = True) -> bytes:
    fields = list(HEADER.unpack_from(blob))
    fields[index] = value
    head = bytearray(HEADER.pack(*fields))
    if fix_crc:
        struct.pack_into("<I", head, 52, zlib.crc32(head[:52]))
    return bytes(head) + blob[HEADER.size :]


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


# -- clear messages ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blob(graph, tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("blob") / "m.mnn"
    save_mnn(graph, path, weights="int8")
    return path.read_bytes()


def load_bytes(tmp_path, data: bytes, use_mmap: bool = True):
    path = tmp_path / "x.mnn"
    path.write_bytes(data)
    return load_mnn(path, mmap=use_mmap)


def error_of(tmp_path, data: bytes) -> str:
    with pytest.raises(MnnFormatError) as info:
        load_bytes(tmp_path, data)
    message = str(info.value)
    assert message.startswith(str(tmp_path / "x.mnn") + ": ") and "\n" not in message
    return message


@pytest.mark.parametrize("data", [b"\x08\x07\x12\x07pytorch\x1a\x052.1.0" + bytes(64), b"hello, world\n"])
def test_message_not_an_mnn_file(tmp_path, data):
    message = error_of(tmp_path, data)
    assert "is not an .mnn model" in message and "ONNX" in message and "MNNMODEL" in message


def test_message_newer_version(tmp_path, blob):
    message = error_of(tmp_path, with_header_field(blob, 1, 3))
    assert "file is version 3, this mnn reads up to 2; upgrade mnn" in message
    assert "damaged" not in message


def test_message_truncated(tmp_path, blob):
    assert "is truncated" in error_of(tmp_path, blob[:-100])
    assert "is truncated" in error_of(tmp_path, blob[:30])
    assert "is truncated" in error_of(tmp_path, blob[:5])
    assert "is empty" in error_of(tmp_path, b"")


def test_message_checksum_mismatch(tmp_path, blob):
    json_off = HEADER.unpack_from(blob)[3]
    damaged = bytearray(blob)
    damaged[json_off + 10] ^= 0x20
    assert "graph description checksum mismatch" in error_of(tmp_path, bytes(damaged))
    damaged = bytearray(blob)
    damaged[20] ^= 0x01  # inside the JSON offset field
    assert "header checksum mismatch" in error_of(tmp_path, bytes(damaged))


def test_message_names_the_bad_field(tmp_path, blob):
    _, doc, data_off = parse(blob)
    doc["nodes"][0]["op"] = 5
    assert "field nodes[0].op must be a string, got int" in error_of(
        tmp_path, pack(json.dumps(doc).encode(), blob[data_off:])
    )
    _, doc, _ = parse(blob)
    doc["nodes"][0]["op"] = "NoSuchOp"
    message = error_of(tmp_path, pack(json.dumps(doc).encode(), blob[data_off:]))
    assert "describes an invalid graph" in message and "unknown op 'NoSuchOp'" in message


def _set(path: str, value):
    """An edit of the JSON document: set the value at a dotted path (list indexes as numbers)."""

    def edit(doc):
        *parents, last = [int(k) if k.isdigit() else k for k in path.split("/")]
        for key in parents:
            doc = doc[key]
        doc[last] = value

    return edit


HOSTILE_EDITS = [
    (_set("tensors/fc.b/offset", -64), "must lie inside the"),
    (_set("tensors/fc.b/offset", 1), "at a multiple of 64 (version 2 rule for 96 bytes)"),
    (_set("tensors/fc.b/offset", 2**62), "must lie inside the"),
    (_set("tensors/steps/offset", 2**62), "must lie inside the"),
    (_set("tensors/fc.b/offset", 0), "overlap in the data section"),
    (_set("tensors/fc.b/nbytes", 100), "has nbytes 100, but float32[24] needs 96"),
    (_set("tensors/fc.b/shape", [2**40, 2**40]), "more than 2**40 elements"),
    (_set("tensors/fc.b/shape", [1] * 9), "has rank 9"),
    (_set("tensors/fc.b/shape", [-24]), "must be a non-negative integer"),
    (_set("tensors/fc.b/dtype", "complex64"), "expected one of float32"),
    (_set("tensors/fc.b/storage", "int8"), "scales_offset/scales_nbytes go with int8"),
    (_set("tensors/fc.b/storage", "bf16"), "expected raw, fp16 or int8"),
    (_set("tensors/conv.w/scales_offset", 0), "overlap in the data section"),
    (lambda doc: doc["tensors"]["conv.w"].pop("scales_nbytes") and None, "scales_offset/scales_nbytes go with"),
    (_set("nodes/1/name", "conv"), "two nodes are named 'conv'"),
    (_set("inputs/conv.w", {"shape": [1], "dtype": "float32"}), "both graph inputs and initializers"),
    (_set("nodes/0/attrs/pads", {"type": "ints", "value": "1111"}), "nodes[0].attrs.pads.value must be a list"),
    (_set("nodes/1/attrs/min", {"type": "float", "value": "-Infinity"}), "must be a number or one of 'inf'"),
    (_set("nodes/0/attrs/group", {"type": "int", "value": 2**64}), "must be a 64-bit integer"),
    (_set("nodes/0/attrs/group", {"type": "complex", "value": 1}), "expected int, float, str, bool"),
    (_set("nodes/0/inputs", "x"), "field nodes[0].inputs must be a list, got str"),
    (_set("weights", "bf16"), "graph.weights is 'bf16'"),
    (_set("metadata/producer", 3), "metadata values must be strings"),
    (lambda doc: json.dumps(doc).replace('"producer"', '"note"'), "duplicate key 'note'"),
    (lambda doc: json.dumps(doc).replace('"test"', "[" * 50_000 + "]" * 50_000), "nested too deeply"),
    (lambda doc: json.dumps(doc).replace('"test"', "NaN"), "NaN is not JSON"),
    (lambda doc: json.dumps(doc).replace('"test"', "1" * 5000), "not valid JSON"),
]


@pytest.mark.parametrize("edit, expected", HOSTILE_EDITS, ids=[e[1][:30] for e in HOSTILE_EDITS])
def test_message_hostile_json(tmp_path, blob, edit, expected):
    _, doc, data_off = parse(blob)
    text = edit(doc) or json.dumps(doc)
    assert expected in error_of(tmp_path, pack(text.encode(), blob[data_off:]))


def v2_parts(blob: bytes) -> tuple[bytes, bytes, bytes]:
    """(JSON text, its stored zlib stream, data section) of a version 2 file."""
    fields, _, data_off = parse(blob)
    stored = blob[fields[3] : fields[3] + fields[4]]
    return zlib.decompress(stored), stored, blob[data_off:]


BAD_STREAMS = [
    (lambda text, stored: b"this is not zlib", "is not a valid zlib stream"),
    (lambda text, stored: gzip.compress(text), "is not a valid zlib stream"),  # gzip framing: not what mnn writes
    (lambda text, stored: stored[:-1] + bytes([stored[-1] ^ 1]), "is not a valid zlib stream"),  # Adler-32
    (lambda text, stored: stored[:-4], "zlib stream is truncated"),
    (lambda text, stored: stored[: len(stored) // 2], "zlib stream is truncated"),
    (lambda text, stored: stored + b"\0", "has 1 unexpected bytes after its zlib stream"),
    (lambda text, stored: stored + zlib.compress(b"{}"), "unexpected bytes after its zlib stream"),
    (lambda text, stored: zlib.compress(text[:-1] + b"\xff}"), "not valid JSON"),  # inflates to bad UTF-8
]


@pytest.mark.parametrize("damage, expected", BAD_STREAMS, ids=[f"{i}-{e[1][:20]}" for i, e in enumerate(BAD_STREAMS)])
def test_message_bad_zlib_stream(tmp_path, blob, damage, expected):
    text, stored, data = v2_parts(blob)
    assert expected in error_of(tmp_path, pack(b"", data, stored=damage(text, stored)))


def test_decompression_bomb_stops_at_the_limit(tmp_path, blob, monkeypatch):
    """A 16 KiB stream of valid JSON (the document, then 16 MiB of spaces) under a 256 KiB limit: rejected,
    having inflated no more than the limit. (Peak memory is about twice the limit, not once: CPython's zlib
    joins its output blocks into one bytes object at the end. Unbounded, this bomb would take 32 MiB.)"""
    limit = 256 << 10
    monkeypatch.setattr(mnnfmt, "MAX_JSON_BYTES", limit)
    text, _, data = v2_parts(blob)
    bomb = zlib.compress(text + b" " * (16 << 20), 9)
    assert len(bomb) < limit // 8
    path = tmp_path / "bomb.mnn"
    path.write_bytes(pack(b"", data, stored=bomb))
    tracemalloc.start()
    try:
        with pytest.raises(MnnFormatError, match=f"inflates to more than {limit} bytes, the limit"):
            load_mnn(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * limit


def test_json_of_exactly_the_limit_loads(tmp_path, blob, monkeypatch):
    text, _, _ = v2_parts(blob)
    monkeypatch.setattr(mnnfmt, "MAX_JSON_BYTES", len(text))
    load_bytes(tmp_path, blob)
    monkeypatch.setattr(mnnfmt, "MAX_JSON_BYTES", len(text) - 1)
    assert f"inflates to more than {len(text) - 1} bytes" in error_of(tmp_path, blob)


def test_save_refuses_a_graph_description_over_the_limit(tmp_path, graph, monkeypatch):
    monkeypatch.setattr(mnnfmt, "MAX_JSON_BYTES", 1000)  # a file load_mnn would refuse is never written
    with pytest.raises(MnnFormatError, match=r"graph description is \d+ bytes of JSON; .mnn allows 1000"):
        save_mnn(graph, tmp_path / "m.mnn")
    assert not os.listdir(tmp_path)


def test_message_alignment_and_overlap_by_size(tmp_path, blob):
    _, doc, data_off = parse(blob)
    at = {name: t["offset"] for name, t in doc["tensors"].items()}
    cases = [
        ("steps", at["steps"] + 4, "tensors['steps'] at offset", "at a multiple of 8 (version 2 rule for 24 bytes)"),
        ("conv.b", at["conv.b"] + 8, "tensors['conv.b'] at offset", "multiple of 64 (version 2 rule for 64 bytes)"),
        ("fc.b", at["fc.b"] + 32, "tensors['fc.b'] at offset", "at a multiple of 64 (version 2 rule for 96 bytes)"),
        ("mask", at["steps"] + 16, "tensors['mask']", "overlap in the data section"),  # inside the packed steps
        ("huge", at["steps"] + 16, "tensors['huge']", "overlap in the data section"),  # over the end of steps
    ]
    for name, offset, *expected in cases:
        edited = copy.deepcopy(doc)
        edited["tensors"][name]["offset"] = offset
        message = error_of(tmp_path, pack(json.dumps(edited).encode(), blob[data_off:]))
        assert all(e in message for e in expected), (name, message)


def test_message_bool_tensor_with_bad_bytes(tmp_path, blob):
    _, doc, data_off = parse(blob)
    data = bytearray(blob)
    data[data_off + doc["tensors"]["mask"]["offset"]] = 7
    assert "bool bytes other than 0 and 1" in error_of(tmp_path, bytes(data))


def test_message_layout_fields(tmp_path, blob):
    assert "unexpected bytes after the data section" in error_of(tmp_path, blob + b"\0")
    assert "feature flags 0x4 unknown" in error_of(tmp_path, with_header_field(blob, 2, 4))
    assert "inconsistent layout" in error_of(tmp_path, with_header_field(blob, 3, 8))  # JSON inside the header
    assert "file is version 9" in error_of(tmp_path, with_header_field(blob, 1, 9, fix_crc=False))


def test_message_missing_path_directory_and_fifo(tmp_path):
    with pytest.raises(MnnFormatError, match="no such file; check the path"):
        load_mnn(tmp_path / "missing.mnn")
    with pytest.raises(MnnFormatError, match="is a directory"):
        load_mnn(tmp_path)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(MnnFormatError, match="not a regular file"):
            load_mnn(tmp_path / "fifo")  # must not block waiting for a writer


# -- fuzzing -------------------------------------------------------------------------------------

HOSTILE_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    -64,
    63,
    2**31,
    2**63,
    -(2**63) - 1,
    2**64,
    10**400,
    1e308,
    -0.0,
    "",
    "x" * 300,
    "inf",
    "nan",
    "float64",
    [],
    {},
    [1] * 9,
    [2**40, 2**40],
    [-1],
    ["N"],
    [None],
    {"type": "int", "value": 1},
    {"type": "tensor", "value": {"dtype": "int8", "shape": [2**40], "data": ""}},
]
DEEP = "[" * 100_000 + "]" * 100_000


def random_path(rng: random.Random, doc) -> list:
    """A random walk from the root to some value in the document."""
    path, node = [], doc
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    return path


def mutate_json(rng: random.Random, doc: dict) -> bytes:
    doc = copy.deepcopy(doc)
    path = random_path(rng, doc)
    if not path:
        return rng.choice(
            [
                b"null",
                b"[]",
                b"{}",
                b"1",
                b'"x"',
                b"\xff\xfe{}",
                b"{" * 100_000,
                DEEP.encode(),
                b'{"a":' * 50_000,
                b"NaN",
                json.dumps(doc).encode()[:-1],
            ]
        )
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, action = path[-1], rng.random()
    if action < 0.6:
        parent[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES + ["__DEEP__"]))
    elif action < 0.7 and isinstance(parent, dict):
        del parent[key]
    elif action < 0.8 and isinstance(parent, dict):
        parent["unexpected"] = 1
    elif action < 0.9 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += rng.choice([-64, -1, 1, 64, 4096])
    else:  # a second copy of a list item or a dict key: duplicate names and nodes
        if isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        else:
            text = json.dumps(doc)
            item = json.dumps({key: parent[key]})[1:-1]
            return text.replace(item, item + "," + item, 1).encode()
    return json.dumps(doc).replace('"__DEEP__"', DEEP).encode()


def mutate(rng: random.Random, blob: bytes) -> bytes:
    fields, doc, data_off = parse(blob)
    version, json_off, json_end = fields[1], fields[3], fields[3] + fields[4]
    kind = rng.randrange(7)
    if kind == 0:
        return blob[: rng.randrange(len(blob))]
    if kind in (1, 2):  # bit flips or overwritten bytes in the header, the JSON or the data
        lo, hi = rng.choice([(0, HEADER.size), (json_off, json_end), (data_off, len(blob))])
        out = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(lo, hi)
            out[at] = out[at] ^ (1 << rng.randrange(8)) if kind == 1 else rng.randrange(256)
        return bytes(out)
    if kind == 3:  # hostile header fields, with a correct header checksum so that they get used
        value = rng.choice(
            [
                0,
                1,
                55,
                56,
                63,
                64,
                65,
                len(blob) - 1,
                len(blob),
                len(blob) + 1,
                2**31,
                2**32 - 1,
                2**63,
                2**64 - 1,
                rng.randrange(2**64),
            ]
        )
        index = rng.choice([1, 2, 3, 4, 5, 6, 7])
        return with_header_field(blob, index, value % 2**32 if index in (1, 2, 7) else value, rng.random() < 0.9)
    if kind == 6:  # a damaged JSON section under a matching checksum: in version 2, a damaged zlib stream
        stored = bytearray(blob[json_off:json_end])
        for _ in range(rng.randint(1, 4)):
            stored[rng.randrange(len(stored))] = rng.randrange(256)
        cut = rng.choice([len(stored), len(stored), rng.randrange(len(stored))])
        stored = bytes(stored[:cut]) + rng.choice([b"", b"\0", b"x" * 9])
        return pack(b"", blob[data_off:], version=version, stored=stored)
    return pack(mutate_json(rng, doc), blob[data_off:], version=version)


@pytest.mark.parametrize("use_mmap", [True, False], ids=["mmap", "read"])
def test_fuzz_mutated_files_load_or_raise_mnn_format_error(tmp_path, graph, use_mmap):
    blobs = []
    for weights in ("fp32", "int8"):
        save_mnn(graph, tmp_path / "base.mnn", weights=weights)
        blobs.append((tmp_path / "base.mnn").read_bytes())
    blobs.append(V1_FIXTURES["int8"].read_bytes())
    rng = random.Random(20240601 + use_mmap)
    outcomes = {"loaded": 0, "rejected": 0}
    for i in range(1500):
        data = mutate(rng, blobs[i % len(blobs)])
        try:
            result = load_bytes(tmp_path, data, use_mmap)
        except MnnFormatError as exc:
            message = str(exc)
            assert "\n" not in message and "bug in mnn" not in message, (i, message)
            outcomes["rejected"] += 1
        else:
            assert isinstance(result, Graph)
            outcomes["loaded"] += 1
    assert outcomes["loaded"] > 50 and outcomes["rejected"] > 1000, outcomes

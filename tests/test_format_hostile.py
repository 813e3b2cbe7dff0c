"""Hostile and damaged .mnn files: each gets one clear MnnFormatError naming what is wrong, never a
crash, a hang or an unbounded allocation; mutated files (the fuzz at the end) likewise."""

from __future__ import annotations

import copy
import gzip
import json
import os
import random
import tracemalloc
import zlib

import pytest
from mnn_file_layout import HEADER, V1_FIXTURES, error_of, load_bytes, make_graph, pack, parse, with_header_field

from mnn_core import format as mnnfmt
from mnn_core.errors import MnnFormatError
from mnn_core.format import load_mnn, save_mnn
from mnn_core.graph.ir import Graph


@pytest.fixture(scope="module")
def graph() -> Graph:
    g = make_graph()
    g.validate()  # what save_mnn stores: node names and default attributes filled in
    return g


# -- clear messages ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blob(graph, tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("blob") / "m.mnn"
    save_mnn(graph, path, weights="int8")
    return path.read_bytes()


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

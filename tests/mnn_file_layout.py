"""The .mnn container's byte layout, read and written here independently of mnn_core.format, from
docs/FORMAT.md, so the format tests also pin the documented layout; and the graph they store."""

from __future__ import annotations

import json
import math
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from mnn_core.errors import MnnFormatError
from mnn_core.format import load_mnn
from mnn_core.graph.ir import Graph, Node, TensorInfo

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

"""Damaged and hostile MNN (FlatBuffers) files give MnnFormatError, never another exception:
offsets, vtables and vectors outside the file, loops of tables, and random mutations of a real
model written by MNN's converter (that part needs `pip install MNN`)."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest

from mnn_core.convert.mnn_official import is_official_mnn
from mnn_core.convert.mnn_official.reader import read_net
from mnn_core.errors import MnnFormatError


def _table(vtable_fields: list[int], body: bytes) -> bytes:
    """A buffer: root offset, a vtable, then a table whose soffset points back at the vtable."""
    vt = struct.pack("<HH", 4 + 2 * len(vtable_fields), 4 + len(body)) + b"".join(
        struct.pack("<H", f) for f in vtable_fields
    )
    vt += b"\0" * (-len(vt) % 4)
    table_pos = 4 + len(vt)
    return struct.pack("<I", table_pos) + vt + struct.pack("<i", table_pos - 4) + body


@pytest.mark.parametrize(
    "data, says",
    [
        (b"", "outside"),
        (b"\x10\0\0\0", "outside"),
        (struct.pack("<I", 1 << 30) + b"\0" * 12, "outside"),
        (struct.pack("<Ii", 4, -1000), "outside"),  # vtable before the file
        (struct.pack("<Ii", 4, 0) + b"\0" * 8, "vtable"),  # the table is its own vtable, of size 0
        # oplists (field 3) whose offset points far past the end
        (_table([0, 0, 0, 4], struct.pack("<I", 1 << 28)), "outside"),
        # a vector of 2**31 ops in a 40-byte file
        (_table([0, 0, 0, 4], struct.pack("<II", 4, 1 << 31)), "outside"),
        # tensorName (field 7) holding one string whose length runs past the file
        (_table([0, 0, 0, 0, 0, 0, 0, 4], struct.pack("<III", 4, 1, 4) + struct.pack("<I", 999)), "outside"),
    ],
)
def test_hostile_buffers_give_a_format_error(data, says):
    with pytest.raises(MnnFormatError, match="not a valid MNN|ops|outside|vtable"):
        read_net(data, "hostile.mnn")


def test_a_table_that_refers_to_itself_stops_at_the_depth_limit():
    # Net.oplists -> [op], op.main (a Convolution2D union) -> the op itself, and so on: a loop
    vt = struct.pack("<HHHHHHHH", 16, 16, 0, 8, 12, 0, 0, 0)  # inputIndexes, main_type, main, ...
    body = struct.pack("<i", 0)  # soffset, patched below
    data = bytearray(struct.pack("<I", 20) + vt + body + struct.pack("<II", 1, 1) + b"\0" * 8)
    struct.pack_into("<i", data, 20, 20 - 4)
    with pytest.raises(MnnFormatError):
        read_net(bytes(data), "loop.mnn")


def test_mnn_own_files_are_not_taken_for_official_ones():
    assert not is_official_mnn(b"MNNMODEL" + b"\0" * 64)
    assert not is_official_mnn(b"\0" * 3)


def test_mutations_of_a_converted_model_give_only_format_errors(tmp_path):
    from test_mnn_official import _has_converter, _ops_model, mnnconvert

    if not _has_converter():
        pytest.skip("needs Alibaba's MNN converter: pip install MNN")
    import mnn_core as mnn

    src = tmp_path / "ops.onnx"
    mnn.save(_ops_model(), src)
    good = mnnconvert(src).read_bytes()
    read_net(good, "good.mnn")
    rng = np.random.default_rng(7)
    kinds = {"loaded": 0, "error": 0}
    for trial in range(int(os.environ.get("MNN_FUZZ_TRIALS", "400"))):
        data = bytearray(good)
        how = trial % 4
        if how == 0:  # flip bytes in the structure (the first part: vtables and offsets live there)
            for _ in range(int(rng.integers(1, 8))):
                data[int(rng.integers(0, len(data)))] ^= int(rng.integers(1, 256))
        elif how == 1:  # truncate
            data = data[: int(rng.integers(0, len(data)))]
        elif how == 2:  # a random 32-bit word (an offset or a length) somewhere
            pos = int(rng.integers(0, len(data) - 4)) & ~3
            struct.pack_into(
                "<I", data, pos, int(rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, int(rng.integers(0, 1 << 32))]))
            )
        else:  # a random 16-bit vtable entry
            pos = int(rng.integers(0, len(data) - 2)) & ~1
            struct.pack_into("<H", data, pos, int(rng.integers(0, 1 << 16)))
        try:
            read_net(bytes(data), f"mutant{trial}.mnn")
            kinds["loaded"] += 1
        except MnnFormatError:
            kinds["error"] += 1
    assert kinds["error"] > 100, kinds

"""Read models written by Alibaba's MNN converter (FlatBuffers, MNN's published schema) into mnn's graph.

    from mnn_core.convert.mnn_official import is_official_mnn, load_official_mnn
    graph = load_official_mnn("mobilenet.mnn")      # mnn_core.load() does this for such files

The reader (flatbuf.py) checks every offset against the file, so a damaged or hostile file gives
MnnFormatError; an op mnn does not map gives one too, naming the op. The flatbuffers package is
not needed. MNN's files have no magic; mnn's own start with b"MNNMODEL" (mnn_core.format), so
the two are told apart by their first bytes.
"""

from __future__ import annotations

import os
import struct

from ...errors import MnnFormatError
from .reader import read_net

__all__ = ["is_official_mnn", "load_official_mnn"]

MAX_FILE_BYTES = 1 << 34  # 16 GiB: MNN's FlatBuffers offsets are 32-bit, so a larger file is not one


def is_official_mnn(head: bytes) -> bool:
    """Whether a file's first bytes look like an MNN FlatBuffers model: a root offset to a table
    just past itself, and a vtable before it (mnn's own files start with b"MNNMODEL")."""
    if len(head) < 12 or head.startswith(b"MNNMODEL"):
        return False
    root = struct.unpack_from("<I", head, 0)[0]
    if root < 4 or root % 4 or root + 4 > len(head):
        return False
    vtable = root - struct.unpack_from("<i", head, root)[0]
    if vtable < 4 or vtable + 4 > len(head):
        return False
    vsize = struct.unpack_from("<H", head, vtable)[0]
    return 4 <= vsize <= 64 and vsize % 2 == 0


def load_official_mnn(path: str | os.PathLike, **options):
    """The Graph of an MNN (Alibaba) .mnn model file. Raises MnnFormatError for a damaged file or an
    op mnn does not read."""
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise MnnFormatError(f"{path}: {size} bytes is larger than any MNN FlatBuffers model")
    with open(path, "rb") as f:
        data = f.read()
    graph = read_net(data, str(path))
    graph.name = os.path.splitext(os.path.basename(path))[0] or graph.name
    graph.metadata["source_format"] = "MNN FlatBuffers (written by Alibaba MNN's converter)"
    return graph

"""The .mnn container: one file holding a Graph and its weights, loaded safely.

Layout (little-endian; docs/FORMAT.md is the reference):

    header  56 bytes: magic, version, flags, JSON offset+size, data offset+size,
            CRC32 of the stored JSON, CRC32 of the header fields
    JSON    the graph description and tensor table: UTF-8 JSON, zlib-compressed (version 1: plain)
    data    tensor bytes, never compressed (they are memory-mapped): tensors of 64 bytes or more at
            64-byte aligned file offsets, smaller ones (scalars, short vectors) at 8-byte aligned ones
            (version 1: every tensor 64-byte aligned)

save_mnn writes version 2; load_mnn reads versions 1 and 2.

Loading trusts nothing: each header field and each JSON field (format_checks.py) is checked
before use, and every failure is one `MnnFormatError` naming the file, what is
wrong and what to do. Stored-as-is tensors come back as read-only views over a
memory map of the file (zero copy); fp16 and int8 storage is converted back to
float32 at load. Weight bytes carry no checksum: checking them would mean
reading the whole file, which is what the memory map avoids.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import mmap as mmap_module
import os
import secrets
import stat
import struct
import zlib
from typing import Any, BinaryIO, Union

import numpy as np

from .errors import GraphError, MnnFormatError
from .format_checks import (  # noqa: F401  (_attr: tests read attributes back through it)
    _GRAPH_FIELDS,
    _TENSOR_FIELDS,
    MAX_ELEMENTS,
    MAX_RANK,
    _attr,
    _Bad,
    _checked_bools,
    _clip,
    _dtype,
    _fields,
    _input,
    _le,
    _list_of,
    _named,
    _node,
    _shape,
    _short,
)
from .graph.ir import DTYPES, Graph, TensorInfo, numpy_dtype

MAGIC = b"MNNMODEL"
VERSION = 2  # the version save_mnn writes and the newest load_mnn reads (it reads 1 too)
ALIGN = 64  # tensors of ALIGN bytes or more start at multiples of this, so mapped views suit SIMD loads
# Smaller tensors start at multiples of SMALL_ALIGN: aligned for every dtype (the widest is 8 bytes). An int8
# model has up to five scalar scales and zero points per QLinearConv; padded to 64 bytes each, they cost more
# than their layer's weights on small models.
SMALL_ALIGN = 8
_HEADER_FIELDS = struct.Struct("<8sIIQQQQI")  # magic, version, flags, json off/size, data off/size, json crc
HEADER_SIZE = _HEADER_FIELDS.size + 4  # + CRC32 of the fields above

WEIGHT_MODES = ("fp32", "fp16", "int8")
STORAGES = {"raw": None, "fp16": "float16", "int8": "int8"}  # storage -> stored dtype (None: as declared)
INT8_MIN_ELEMENTS = 256  # smaller tensors (biases, norms) gain little and lose the most accuracy
MAX_JSON_BYTES = 64 << 20  # the JSON text (inflated, in version 2) and its stored bytes; read at call time
ZLIB_LEVEL = 9  # the JSON is written once and read often: the smallest output is worth the time

PathLike = Union[str, bytes, "os.PathLike[str]"]


def _align(n: int, to: int = ALIGN) -> int:
    return -(-n // to) * to


def _alignment(nbytes: int, version: int) -> int:
    """The alignment a tensor of `nbytes` has in the data section of a file of `version`."""
    return ALIGN if version == 1 or nbytes >= ALIGN else SMALL_ALIGN


# -- saving -------------------------------------------------------------------


def save_mnn(graph: Graph, path: PathLike, *, weights: str = "fp32") -> None:
    """Write `graph` to `path` atomically; `weights` is "fp32", "fp16" or "int8" (see docs/FORMAT.md).

    Raises GraphError if the graph is invalid (a file load_mnn would reject is
    never written), MnnFormatError for values the format cannot hold, OSError
    for I/O failures. On any failure an existing file at `path` is untouched.
    """
    if weights not in WEIGHT_MODES:
        raise MnnFormatError(f"weights must be one of {', '.join(WEIGHT_MODES)}, got {weights!r}")
    g = graph.copy()
    g.validate()  # on a copy: validate names nodes and fills in default attributes
    _check_format_holds(g)
    table, chunks, data_size = _plan_tensors(g.initializers, weights)
    doc = _graph_doc(g, weights, table)
    text = json.dumps(doc, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    stored = zlib.compress(text, ZLIB_LEVEL)
    if max(len(text), len(stored)) > MAX_JSON_BYTES:  # load_mnn would refuse it: do not write it
        raise MnnFormatError(
            f"the graph description is {len(text)} bytes of JSON; .mnn allows {MAX_JSON_BYTES}: store large "
            "constants as initializers (graph.initializers), not as node attributes"
        )
    _write_atomic(os.fspath(path), stored, chunks, data_size)


def _check_format_holds(g: Graph) -> None:
    """The format holds tensor graphs: say so for sequence/optional inputs and control-flow bodies."""
    for name, info in g.inputs.items():
        if not isinstance(info, TensorInfo):
            raise MnnFormatError(
                f"graph input {name!r} is {info}: .mnn format version {VERSION} stores tensor "
                "inputs only; keep such a model as .onnx (mnn runs it from there)"
            )
    for node, key, _ in g.subgraphs():
        raise MnnFormatError(
            f"node {node.name!r} ({node.op}) has a sub-graph attribute {key!r}: .mnn format version "
            f"{VERSION} does not store control flow; keep such a model as .onnx (mnn runs it "
            "from there)"
        )


def quantize_int8(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-output-channel (axis 0) int8: w ~= q * scales[c], scale = max|w[c]| / 127."""
    flat = w.reshape(w.shape[0], -1).astype(np.float64)
    scales = (np.abs(flat).max(axis=1) / 127.0).astype(np.float32)
    divisor = np.where(scales > 0, scales, 1.0).astype(np.float64)  # all-zero channel: scale 0, q 0
    q = np.clip(np.rint(flat / divisor[:, None]), -127, 127).astype(np.int8)
    return q.reshape(w.shape), scales


def dequantize_int8(q: np.ndarray, scales: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # a damaged scale may overflow to inf: weight bytes are not checksummed
        return q.astype(np.float32) * scales.astype(np.float32).reshape((-1,) + (1,) * (q.ndim - 1))


def _encode_tensor(name: str, value: Any, weights: str) -> tuple[str, list[np.ndarray]]:
    """Storage mode and the little-endian arrays to write (int8: values, then scales)."""
    arr = np.asarray(value)
    if arr.dtype.name not in DTYPES:
        raise MnnFormatError(f"initializer {name!r} has dtype {arr.dtype}; .mnn stores {', '.join(DTYPES)}")
    if arr.ndim > MAX_RANK or arr.size > MAX_ELEMENTS:
        raise MnnFormatError(f"initializer {name!r} of shape {arr.shape} is too large for .mnn (rank <= {MAX_RANK})")
    if arr.dtype.name == "float32":
        # values beyond the fp16 range would silently become inf: keep such tensors fp32
        if weights == "fp16" and not (np.abs(arr[np.isfinite(arr)]) > np.finfo(np.float16).max).any():
            return "fp16", [arr.astype(_le("float16"))]
        if weights == "int8" and arr.ndim >= 2 and arr.size >= INT8_MIN_ELEMENTS and np.isfinite(arr).all():
            q, scales = quantize_int8(arr)
            return "int8", [q, scales.astype(_le("float32"))]
    return "raw", [np.asarray(arr, dtype=_le(arr.dtype.name), order="C")]


def _plan_tensors(initializers: dict, weights: str) -> tuple[dict, list[tuple[int, np.ndarray]], int]:
    """The tensor table, the (data-section offset, array) pairs to write in file order, and the data size.

    Arrays of ALIGN bytes or more come first, in initializer order, each at a multiple of ALIGN; the small
    ones follow, packed at multiples of SMALL_ALIGN. Interleaved (a QLinearConv's scalars sit between its
    weights and bias), each small one would cost up to ALIGN - 8 bytes of padding before the next large one.
    """
    encoded = {name: _encode_tensor(name, value, weights) for name, value in initializers.items()}
    arrays = [(name, i, arr) for name, (_, arrs) in encoded.items() for i, arr in enumerate(arrs)]
    offsets: dict[tuple[str, int], int] = {}
    chunks: list[tuple[int, np.ndarray]] = []
    end = 0
    for name, i, arr in sorted(arrays, key=lambda item: item[2].nbytes < ALIGN):  # stable: large, then small
        offsets[name, i] = _align(end, _alignment(arr.nbytes, VERSION))
        chunks.append((offsets[name, i], arr))
        end = offsets[name, i] + arr.nbytes
    table: dict[str, dict] = {}
    for name, value in initializers.items():
        storage, arrs = encoded[name]
        entry = {
            "dtype": np.asarray(value).dtype.name,
            "shape": [int(d) for d in np.shape(value)],
            "storage": storage,
            "offset": offsets[name, 0],
            "nbytes": arrs[0].nbytes,
        }
        if storage == "int8":
            entry.update(scales_offset=offsets[name, 1], scales_nbytes=arrs[1].nbytes)
        table[name] = entry
    return table, chunks, end


def _encode_float(x: float) -> float | str:
    x = float(x)
    if math.isfinite(x):
        return x  # json writes repr(x), which reads back bit-exact
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")  # JSON has no inf/nan


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _encode_attr(where: str, value: Any) -> dict:
    """A typed JSON attribute: {"type": kind, "value": ...}; the tag keeps int/float/list kinds apart."""
    if isinstance(value, (bool, np.bool_)):
        return {"type": "bool", "value": bool(value)}
    if _is_int(value):
        return {"type": "int", "value": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"type": "float", "value": _encode_float(value)}
    if isinstance(value, str):
        return {"type": "str", "value": value}
    if isinstance(value, np.ndarray) and value.dtype.name in DTYPES and value.ndim <= MAX_RANK:
        data = np.asarray(value, dtype=_le(value.dtype.name), order="C").tobytes()
        tensor = {"dtype": value.dtype.name, "shape": list(value.shape), "data": base64.b64encode(data).decode()}
        return {"type": "tensor", "value": tensor}
    if isinstance(value, (list, tuple)):
        if all(_is_int(v) for v in value):
            return {"type": "ints", "value": [int(v) for v in value]}
        if all(isinstance(v, (float, np.floating)) or _is_int(v) for v in value):
            return {"type": "floats", "value": [_encode_float(v) for v in value]}
        if all(isinstance(v, str) for v in value):
            return {"type": "strs", "value": list(value)}
    raise MnnFormatError(
        f"cannot save {where} = {_short.repr(value)}: attributes are int, float, str, bool, "
        f"lists of int/float/str, or numpy arrays of {', '.join(DTYPES)} (rank <= {MAX_RANK})"
    )


def _graph_doc(g: Graph, weights: str, table: dict) -> dict:
    metadata = {k: v for k, v in g.metadata.items() if k != "mnn.weights"}  # load_mnn sets it afresh
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise MnnFormatError("graph metadata must map str to str; convert the values with str() first")
    for name, info in g.inputs.items():
        if len(info.shape) > MAX_RANK:
            raise MnnFormatError(f"graph input {name!r} has rank {len(info.shape)}; .mnn allows at most {MAX_RANK}")
    nodes = [
        {
            "op": n.op,
            "name": n.name,
            "inputs": list(n.inputs),
            "outputs": list(n.outputs),
            # (None: an optional attribute left out, which loading fills in again as its default)
            "attrs": {
                k: _encode_attr(f"node {n.name!r} attribute {k!r}", v) for k, v in n.attrs.items() if v is not None
            },
        }
        for n in g.nodes
    ]
    inputs = {
        name: {"shape": [int(d) if _is_int(d) else d for d in info.shape], "dtype": info.dtype}
        for name, info in g.inputs.items()
    }
    return {
        "name": g.name,
        "weights": weights,
        "metadata": metadata,
        "inputs": inputs,
        "outputs": list(g.outputs),
        "nodes": nodes,
        "tensors": table,
    }


def _pack_header(flags: int, json_offset: int, json_size: int, data_offset: int, data_size: int, json_crc: int):
    fields = _HEADER_FIELDS.pack(MAGIC, VERSION, flags, json_offset, json_size, data_offset, data_size, json_crc)
    return fields + struct.pack("<I", zlib.crc32(fields))


def _write_array(f: BinaryIO, arr: np.ndarray) -> None:
    f.write(arr.reshape(-1).view(np.uint8))


def _write_atomic(path: str | bytes, stored: bytes, chunks: list[tuple[int, np.ndarray]], data_size: int) -> None:
    """Write to a temp file beside `path`, fsync, then rename over it: readers see old or new, never half."""
    json_offset = HEADER_SIZE  # the JSON is read, not mapped: no alignment needed
    data_offset = _align(json_offset + len(stored))
    header = _pack_header(0, json_offset, len(stored), data_offset, data_size, zlib.crc32(stored))
    path = os.fsdecode(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)  # honours umask
    try:
        with os.fdopen(fd, "wb") as f:
            for offset, data in [(0, header), (json_offset, stored)]:
                f.write(b"\0" * (offset - f.tell()) + data)
            f.write(b"\0" * (data_offset - f.tell()))
            for offset, arr in chunks:
                f.write(b"\0" * (data_offset + offset - f.tell()))
                _write_array(f, arr)
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # overwriting keeps the old permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX; Windows refuses: fine)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# -- loading ------------------------------------------------------------------


def load_mnn(path: PathLike, *, mmap: bool = True) -> Graph:
    """Read a .mnn file. Raises MnnFormatError (and nothing else) for any problem, missing file included.

    With mmap=True, tensors stored as-is are read-only zero-copy views over a
    memory map of the file, kept alive by the arrays themselves; with
    mmap=False every tensor is an ordinary array read into memory.
    """
    try:
        shown = os.fsdecode(path)
    except TypeError:
        raise MnnFormatError(f"load_mnn takes a file path, got {type(path).__name__}") from None
    shown = shown if shown.isprintable() else repr(shown)  # keep the message on one line
    try:
        return _load(path, mmap)
    except _Bad as exc:
        raise MnnFormatError(f"{shown}: {exc}") from None
    except FileNotFoundError:
        raise MnnFormatError(f"{shown}: no such file; check the path") from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise MnnFormatError(f"{shown}: cannot read the file ({reason}); check the path and permissions") from exc
    except Exception as exc:  # a case the checks missed: still one clear error, not a deep traceback
        raise MnnFormatError(
            f"{shown}: cannot be loaded ({type(exc).__name__}: {_clip(str(exc))}); this is a bug in mnn's "
            "loader, please report it with the file"
        ) from exc


def _load(path: PathLike, use_mmap: bool) -> Graph:
    # O_NONBLOCK: opening a FIFO must not wait for a writer (it is then rejected as not a regular file)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _Bad("is a directory, not a .mnn file", "pass the path of the model file inside it")
        if not stat.S_ISREG(st.st_mode):
            raise _Bad("is not a regular file", "pass the path of a .mnn model file")
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        header = _read_header(f, st.st_size)
        doc = _read_json(f, header)
        source: Any = f
        if use_mmap:
            source = mmap_module.mmap(f.fileno(), 0, access=mmap_module.ACCESS_READ)  # outlives f: arrays hold it
            if len(source) != st.st_size:
                raise _Bad("changed size while being loaded", "load it again once it is no longer being written")
        return _build_graph(doc, source, header)


def _read_exact(f: BinaryIO, offset: int, n: int) -> bytes:
    f.seek(offset)
    data = f.read(n)
    if len(data) != n:
        raise _Bad("changed while being loaded (a read came back short)", "load it again once it is complete")
    return data


def _read_header(f: BinaryIO, size: int) -> dict[str, int]:
    raw = f.read(HEADER_SIZE)
    if not raw:
        raise _Bad("is empty (0 bytes), not an .mnn model", "export or copy the model again")
    if raw[: len(MAGIC)] != MAGIC and not (len(raw) < len(MAGIC) and MAGIC.startswith(raw)):
        raise _Bad(
            f"is not an .mnn model (it starts with {raw[:8]!r}, not {MAGIC!r})",
            "pass a file written by mnn_core.format.save_mnn; ONNX and other models must be converted first",
        )
    if len(raw) < HEADER_SIZE:
        raise _Bad(
            f"is truncated: {size} bytes, shorter than the {HEADER_SIZE}-byte header",
            "the copy or download was cut short; get the file again",
        )
    fields, (stored_crc,) = raw[: _HEADER_FIELDS.size], struct.unpack("<I", raw[_HEADER_FIELDS.size :])
    _, version, flags, json_offset, json_size, data_offset, data_size, json_crc = _HEADER_FIELDS.unpack(fields)
    crc_ok = stored_crc == zlib.crc32(fields)
    if version > VERSION:  # before the CRC: a future version may lay its header out differently
        damaged = "" if crc_ok else " (or the header is damaged: its checksum does not match)"
        raise _Bad(f"file is version {version}, this mnn reads up to {VERSION}{damaged}", "upgrade mnn")
    if not crc_ok:
        raise _Bad("header checksum mismatch: the header is damaged")
    if version < 1:
        raise _Bad(f"has format version {version}, which no mnn writes")
    if flags:
        raise _Bad(f"uses feature flags {flags:#x} unknown to this mnn", "upgrade mnn")
    end = data_offset + data_size
    if end > size:
        raise _Bad(
            f"is truncated: {size} bytes, but its header says the data ends at byte {end}",
            "the copy or download was cut short; get the file again",
        )
    if end < size:
        raise _Bad(f"has {size - end} unexpected bytes after the data section")
    if not HEADER_SIZE <= json_offset <= json_offset + json_size <= data_offset or data_offset % ALIGN:
        raise _Bad(f"has an inconsistent layout (JSON at {json_offset}+{json_size}, data at {data_offset})")
    if not 0 < json_size <= MAX_JSON_BYTES:
        raise _Bad(f"has a {json_size}-byte graph description; the limit is {MAX_JSON_BYTES}")
    return dict(
        version=version,
        json_offset=json_offset,
        json_size=json_size,
        json_crc=json_crc,
        data_offset=data_offset,
        data_size=data_size,
    )


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _DuplicateKey(f"duplicate key {_short.repr(dup)}")
    return obj


def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")  # json accepts NaN/Infinity by default; mnn never writes them


def _inflate(stored: bytes) -> bytes:
    """The JSON text of a version 2 file: one complete zlib stream, inflating to at most MAX_JSON_BYTES.

    max_length bounds the output whatever the stream claims, so a decompression bomb stops at the limit
    (+1 byte, which tells "exactly the limit" from "more") instead of filling memory.
    """
    limit = MAX_JSON_BYTES
    inflater = zlib.decompressobj()
    try:
        text = inflater.decompress(stored, limit + 1)
    except zlib.error as exc:
        raise _Bad(f"graph description is not a valid zlib stream ({_clip(str(exc))})") from None
    if len(text) > limit:
        raise _Bad(f"graph description inflates to more than {limit} bytes, the limit")
    if not inflater.eof:
        raise _Bad("graph description's zlib stream is truncated (it ends before its last block)")
    if inflater.unused_data:
        raise _Bad(f"graph description has {len(inflater.unused_data)} unexpected bytes after its zlib stream")
    return text


def _read_json(f: BinaryIO, header: dict[str, int]) -> dict:
    raw = _read_exact(f, header["json_offset"], header["json_size"])
    if zlib.crc32(raw) != header["json_crc"]:
        raise _Bad("graph description checksum mismatch: the JSON section is damaged")
    text = raw if header["version"] == 1 else _inflate(raw)
    try:
        doc = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_no_constants)
    except RecursionError:
        raise _Bad("graph description is nested too deeply") from None
    except ValueError as exc:  # bad JSON, bad UTF-8, integers of thousands of digits, duplicate keys
        raise _Bad(f"graph description is not valid JSON ({_clip(str(exc))})") from None
    return _fields(doc, _GRAPH_FIELDS, "graph")


# -- tensors ----------------------------------------------------------------------


def _tensor_entry(name: str, obj: Any, data_size: int, version: int) -> dict:
    """A checked tensor-table entry, plus its extents in the data section."""
    where = _named(name, "tensors")
    _fields(obj, _TENSOR_FIELDS, where, optional=frozenset({"scales_offset", "scales_nbytes"}))
    dtype, storage = _dtype(obj["dtype"], f"{where}.dtype"), obj["storage"]
    shape = _shape(obj["shape"], f"{where}.shape")
    if storage not in STORAGES:
        raise _Bad(f"{where}.storage is {_short.repr(storage)}; expected raw, fp16 or int8")
    if storage != "raw" and dtype != "float32":
        raise _Bad(f"{where} has {storage} storage, which holds float32 tensors only, not {dtype}")
    scales = ("scales_offset" in obj, "scales_nbytes" in obj)
    if scales != (storage == "int8",) * 2 or storage == "int8" and not shape:
        raise _Bad(f"{where}: scales_offset/scales_nbytes go with int8 storage of rank >= 1, and only there")
    stored = STORAGES[storage] or dtype
    extents = [(f"{where}", obj["offset"], obj["nbytes"], math.prod(shape) * numpy_dtype(stored).itemsize)]
    if storage == "int8":
        extents.append((f"{where} scales", obj["scales_offset"], obj["scales_nbytes"], shape[0] * 4))
    for label, offset, nbytes, expected in extents:
        if nbytes != expected:
            raise _Bad(f"{label} has nbytes {nbytes}, but {stored}{list(shape)} needs {expected}")
        align = _alignment(nbytes, version)
        if offset < 0 or offset % align or offset + nbytes > data_size:
            raise _Bad(
                f"{label} at offset {offset} (+{nbytes}) must lie inside the {data_size}-byte data section "
                f"at a multiple of {align} (version {version} rule for {nbytes} bytes)"
            )
    return {"name": name, "dtype": dtype, "shape": shape, "storage": storage, "stored": stored, "extents": extents}


def _check_no_overlap(entries: list[dict]) -> None:
    spans = sorted((off, off + n, label) for e in entries for label, off, n, _ in e["extents"] if n)
    for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
        if start < end:
            raise _Bad(f"{a} and {b} overlap in the data section")


def _array(source: Any, offset: int, dtype: str, count: int) -> np.ndarray:
    """`count` items at file `offset`: a view of the mmap, or a fresh array read from the file."""
    if isinstance(source, mmap_module.mmap):
        return np.frombuffer(source, dtype=_le(dtype), count=count, offset=offset)  # holds a ref to the mmap
    out = np.empty(count, dtype=_le(dtype))
    source.seek(offset)
    if source.readinto(out.view(np.uint8)) != out.nbytes:
        raise _Bad("changed while being loaded (a read came back short)", "load it again once it is complete")
    return out


def _tensor(source: Any, data_offset: int, e: dict) -> np.ndarray:
    shape, (_, offset, _, _) = e["shape"], e["extents"][0]
    values = _array(source, data_offset + offset, e["stored"], math.prod(shape)).reshape(shape)
    if e["storage"] == "fp16":
        return values.astype(np.float32)
    if e["storage"] == "int8":
        scales = _array(source, data_offset + e["extents"][1][1], "float32", shape[0])
        return dequantize_int8(values, scales)
    return _checked_bools(values, f"tensors[{_short.repr(e['name'])}]")


def _build_graph(doc: dict, source: Any, header: dict[str, int]) -> Graph:
    if doc["weights"] not in WEIGHT_MODES:
        raise _Bad(f"graph.weights is {_short.repr(doc['weights'])}; expected fp32, fp16 or int8")
    metadata = {k: v for k, v in doc["metadata"].items() if type(v) is str}
    if len(metadata) != len(doc["metadata"]):
        raise _Bad("graph.metadata values must be strings")
    entries = [_tensor_entry(name, obj, header["data_size"], header["version"]) for name, obj in doc["tensors"].items()]
    _check_no_overlap(entries)
    graph = Graph(
        inputs={name: _input(name, obj) for name, obj in doc["inputs"].items()},
        outputs=list(_list_of(doc["outputs"], str, "graph.outputs")),
        nodes=[_node(obj, f"nodes[{i}]") for i, obj in enumerate(doc["nodes"])],
        initializers={e["name"]: _tensor(source, header["data_offset"], e) for e in entries},
        name=doc["name"],
        metadata={**metadata, "mnn.weights": doc["weights"]},
    )
    try:
        graph.validate()
    except GraphError as exc:
        raise _Bad(f"describes an invalid graph: {exc}") from None
    return graph

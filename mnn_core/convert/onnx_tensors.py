"""The tensors (and text) of an ONNX file, read as untrusted input.

A downloaded model decides what its tensors declare: their dims, their bytes and where
their external data lives. What mnn promises about them (docs/RELIABILITY.md):

- every external-data reference anywhere in the model (initializers, Constant-node
  attributes, If/Loop/Scan bodies, function bodies, sparse tensors' values and indices)
  is checked by mnn before any is read: a relative path without `..` that resolves,
  symlinks followed, to a regular file inside the model's folder, with its offset and
  length inside that file. A reference that fails is an MnnError naming the tensor and
  the reference; nothing is ever read relative to the working directory;
- a dense tensor's array is never larger than the bytes that back it (its dims must
  match its data), and a sparse tensor's dense form is checked (dims, indices) and
  counted against a budget of SPARSE_FILE_FACTOR times the model's bytes plus
  SPARSE_SLACK_BYTES before it is allocated.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import MnnError

#: a model's sparse tensors expand to at most this many times its bytes, plus the slack
SPARSE_FILE_FACTOR = 4
SPARSE_SLACK_BYTES = 256 << 20


def all_tensors(proto) -> Iterator[tuple[str, Any]]:
    """(label, TensorProto) for every tensor of a ModelProto: initializers, sparse tensors'
    values and indices, node attributes, in the graph, its sub-graphs and its functions."""
    from onnx import AttributeProto

    stack: list[tuple[str, Any]] = [("", proto.graph)]
    stack += [(f"function {f.name!r}: ", f) for f in proto.functions]
    stack += [(f"training info {i}: ", t.initialization) for i, t in enumerate(proto.training_info)]
    stack += [(f"training info {i} update: ", t.algorithm) for i, t in enumerate(proto.training_info)]
    while stack:
        where, body = stack.pop()
        for t in getattr(body, "initializer", ()):
            yield f"{where}initializer {t.name!r}", t
        for s in getattr(body, "sparse_initializer", ()):
            yield f"{where}sparse initializer {s.values.name!r} (values)", s.values
            yield f"{where}sparse initializer {s.values.name!r} (indices)", s.indices
        for node in body.node:
            at = f"{where}node {node.name or node.op_type!r}"
            for a in node.attribute:
                label = f"{at} attribute {a.name!r}"
                if a.type == AttributeProto.TENSOR or a.HasField("t"):
                    yield _named(a.t, label), a.t
                for t in a.tensors:
                    yield _named(t, label), t
                for s in ([a.sparse_tensor] if a.HasField("sparse_tensor") else []) + list(a.sparse_tensors):
                    yield f"{_named(s.values, label)} (values)", s.values
                    yield f"{_named(s.values, label)} (indices)", s.indices
                if a.HasField("g"):
                    stack.append((f"{label}: ", a.g))
                stack += [(f"{label}[{i}]: ", g) for i, g in enumerate(a.graphs)]


def _named(tensor, label: str) -> str:
    return f"tensor {tensor.name!r} ({label})" if tensor.name else label


def check_text(proto, source: str) -> None:
    """An MnnError when a text field of the model (a name, an op type, a domain, an external
    data location, ...) is not UTF-8: protobuf hands such a field over as bytes."""
    stack = [proto]
    while stack:
        msg = stack.pop()
        for fd, value in msg.ListFields():
            repeated = getattr(fd, "is_repeated", None)
            if repeated is None:
                repeated = fd.label == fd.LABEL_REPEATED
            values = value if repeated else (value,)
            if fd.type == fd.TYPE_MESSAGE:
                stack.extend(values)
            elif fd.type == fd.TYPE_STRING:
                for v in values:
                    if isinstance(v, bytes):
                        raise MnnError(
                            f"{source}: a {fd.containing_type.name}.{fd.name} is not UTF-8 text "
                            f"({v[:60]!r}): the file is damaged or not an ONNX model"
                        )


def _is_external(tensor) -> bool:
    from onnx import TensorProto

    return tensor.HasField("data_location") and tensor.data_location == TensorProto.EXTERNAL


def uses_external_data(proto) -> bool:
    return any(_is_external(t) for _, t in all_tensors(proto))


class _Ref:
    """One checked external-data reference: the file (by identity) and the byte range."""

    def __init__(self, label: str, tensor, path: str, st, offset: int, length: int):
        self.label, self.tensor, self.path, self.st = label, tensor, path, st
        self.offset, self.length = offset, length


def load_external_data(proto, folder, source: str) -> int:
    """Check every external-data reference of `proto` against `folder`, then (only when all
    pass) read each into its tensor's raw_data. Returns the bytes read."""
    refs = [_check_reference(label, t, folder, source) for label, t in all_tensors(proto) if _is_external(t)]
    total = 0
    fds: dict[str, int] = {}
    try:
        for ref in refs:
            fd = fds.get(ref.path)
            if fd is None:
                fd = fds[ref.path] = _open_checked(ref, source)
            data = _pread_exactly(fd, ref, source)
            ref.tensor.raw_data = data
            ref.tensor.data_location = 0  # TensorProto.DEFAULT
            del ref.tensor.external_data[:]
            total += len(data)
    finally:
        for fd in fds.values():
            os.close(fd)
    return total


def _bad_ref(source: str, label: str, location: str, why: str) -> MnnError:
    return MnnError(
        f"{source}: {label} refers to external data {location!r}, which {why}; "
        "an ONNX model's external data must be a file inside the model's folder"
    )


def _check_reference(label: str, tensor, folder, source: str) -> _Ref:
    entries = {e.key: e.value for e in tensor.external_data}
    location = entries.get("location", "")
    if not location:
        raise _bad_ref(source, label, location, "is empty (no location)")
    if "\0" in location:
        raise _bad_ref(source, label, location, "has a NUL character")
    parts = re.split(r"[/\\]", location)
    if location.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", location) or os.path.isabs(location):
        raise _bad_ref(source, label, location, "is an absolute path")
    if ".." in parts:
        raise _bad_ref(source, label, location, "leaves the model's folder ('..')")
    root = os.path.realpath(folder)
    path = os.path.realpath(os.path.join(root, *[p for p in parts if p]))
    if os.path.commonpath([root, path]) != root or path == root:
        raise _bad_ref(source, label, location, f"resolves (through a symlink) to {path}, outside {root}")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _bad_ref(source, label, location, f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _bad_ref(source, label, location, "is not a regular file (a folder, FIFO or device)")
    offset, length = _int_entry(entries, "offset", 0, label, source), _int_entry(entries, "length", None, label, source)
    if offset > st.st_size:
        raise _bad_ref(source, label, location, f"is {st.st_size} bytes, less than its offset {offset}")
    if length is None:
        length = st.st_size - offset
    elif offset + length > st.st_size:
        raise _bad_ref(
            source, label, location, f"is {st.st_size} bytes; offset {offset} + length {length} reaches past its end"
        )
    return _Ref(label, tensor, path, st, offset, length)


def _int_entry(entries: dict, key: str, default, label: str, source: str):
    text = entries.get(key)
    if text is None or text == "":
        return default
    if not text.strip().isdigit():
        raise MnnError(f"{source}: {label} has external-data {key} {text[:40]!r}, not a non-negative integer")
    return int(text)


def _open_checked(ref: _Ref, source: str) -> int:
    """Open the file checked before (O_NOFOLLOW, O_NONBLOCK: a file swapped since for a
    symlink or a FIFO neither redirects nor blocks), and make sure it is that file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(ref.path, flags)
    except OSError as exc:
        raise _bad_ref(source, ref.label, ref.path, f"cannot be opened ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (ref.st.st_dev, ref.st.st_ino):
        os.close(fd)
        raise _bad_ref(source, ref.label, ref.path, "changed while the model was being read")
    return fd


def _pread_exactly(fd: int, ref: _Ref, source: str) -> bytes:
    chunks, at, left = [], ref.offset, ref.length
    while left:
        chunk = os.pread(fd, min(left, 1 << 30), at)
        if not chunk:
            raise _bad_ref(source, ref.label, ref.path, "became shorter while it was being read")
        chunks.append(chunk)
        at += len(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- tensors as arrays -------------------------------------------------------------------------


def tensor_array(tensor, source: str = "") -> np.ndarray:
    """A TensorProto's array; an MnnError (naming the tensor) for one that is damaged: negative
    dims, dims that do not match its data, an unknown type, external data not loaded."""
    from onnx import numpy_helper

    from .onnx_common import onnx_type_name

    what = f"{source}: " if source else ""
    what += f"tensor {tensor.name!r} ({onnx_type_name(tensor.data_type)}{list(tensor.dims)})"
    if any(d < 0 for d in tensor.dims):
        raise MnnError(f"{what} has a negative dimension")
    if _is_external(tensor):  # (load_external_data reads them all first; never from the working directory)
        raise MnnError(
            f"{what} keeps its data in an external file that was not loaded: open the model "
            "from its path, or pass base_dir="
        )
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:  # noqa: BLE001  a damaged tensor: wrong size, unknown type, bad strings
        raise MnnError(f"{what} cannot be read: {exc}") from None


class SparseBudget:
    """The bytes a model's sparse tensors may still expand to (shared by its sub-graphs)."""

    def __init__(self, model_bytes: int):
        self.model_bytes = model_bytes
        self.left = SPARSE_FILE_FACTOR * model_bytes + SPARSE_SLACK_BYTES

    def take(self, nbytes: int, what: str) -> None:
        if nbytes > self.left:
            raise MnnError(
                f"{what} expands to {nbytes} bytes, more than this model may allocate for its sparse "
                f"tensors ({SPARSE_FILE_FACTOR}x its {self.model_bytes} bytes + {SPARSE_SLACK_BYTES >> 20} "
                f"MiB, {self.left} bytes left): the file is damaged or hostile"
            )
        self.left -= nbytes


def sparse_array(sparse, source: str, budget: SparseBudget) -> np.ndarray:
    """The dense array of a SparseTensorProto, checked before it is allocated: dims, the
    shapes of values ([NNZ]) and indices ([NNZ] linear or [NNZ, rank]), the range of every
    index, and the dense size against the model's budget."""
    name = sparse.values.name
    dims = [int(d) for d in sparse.dims]
    what = f"{source}: sparse tensor {name!r} (dims {dims})"
    if any(d < 0 for d in dims):
        raise MnnError(f"{what} has a negative dimension")
    values = tensor_array(sparse.values, source)
    if values.ndim != 1:
        raise MnnError(f"{what}: its values have shape {list(values.shape)}; ONNX sparse values are 1-D [NNZ]")
    nnz, rank, size = values.shape[0], len(dims), math.prod(dims)
    budget.take(size * values.dtype.itemsize, what)
    indices = tensor_array(sparse.indices, source)
    if indices.dtype.kind not in "iu":
        raise MnnError(f"{what}: its indices are {indices.dtype}, not integers")
    if indices.shape not in ((nnz,), (nnz, rank)):
        raise MnnError(
            f"{what}: its indices have shape {list(indices.shape)}; with {nnz} values they must be "
            f"[{nnz}] (linear) or [{nnz}, {rank}] (coordinates)"
        )
    indices = indices.astype(np.int64, copy=False)  # (a uint64 past int64's range turns negative: refused)
    bounds = np.asarray([size] if indices.ndim == 1 else dims, dtype=np.int64)
    if indices.size and (indices.min() < 0 or bool((indices >= bounds).any())):
        raise MnnError(f"{what}: an index is out of range of the dims")
    dense = np.zeros(size, dtype=values.dtype)
    if nnz:
        if indices.ndim == 1:
            flat = indices
        else:  # coordinates (a scalar's are empty rows: all address its one element)
            flat = np.ravel_multi_index(tuple(indices.T), tuple(dims)) if rank else np.zeros(nnz, np.int64)
        dense[flat] = values
    return dense.reshape(tuple(dims))

"""Checkpoint tensors from `*.safetensors`, opened memory-mapped by the safetensors package.

Tensors are read by name on demand, so a loader touches only the pages it uses, each through a handle
opened for that read: the package's numpy arrays are copies, and a mapping kept open would hold every
page read so far in the process's memory (a 0.5B checkpoint's 2 GB while a quantized decoder that
keeps 0.3 GB is built). bfloat16 (which numpy lacks) is widened to float32 here: its bits are the top
half of a float32's.

A float32 decoder's weights are not copied at all (`view`): the graph holds read-only maps of their
bytes in the file, which the kernels pack from; pages of the file are not the process's heap, and the
session hands them back once packed (runtime/weights.py), so the weights are held once, packed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import MnnError

#: a float32 tensor larger than this is read a slice of rows of about this size at a time
SLICE_BYTES = 64 << 20


class Checkpoint:
    """name -> numpy array over every `*.safetensors` file of a checkpoint directory."""

    def __init__(self, path: str | Path):
        try:
            from safetensors import safe_open
        except ImportError:
            raise MnnError("reading a checkpoint needs the safetensors package: pip install 'mnn-core[llm]'") from None
        path = Path(path)
        files = sorted(path.glob("*.safetensors")) if path.is_dir() else [path]
        if not files:
            raise MnnError(f"{path}: no *.safetensors files (save the model with save_pretrained)")
        self._open = safe_open
        self._where: dict[str, Path] = {}
        self._headers: dict[Path, tuple[int, dict]] = {}  # file -> (where its data starts, its header)
        for file in files:
            for name in self._handle(file).keys():
                self._where[name] = file

    def _handle(self, file: Path):
        try:
            # framework "pt" only reads bf16 as torch does; "numpy" serves every other dtype
            return self._open(str(file), framework="numpy")
        except Exception as exc:  # the package raises its own error types for a damaged header
            raise MnnError(f"{file}: not a readable safetensors file ({exc})") from None

    def _read(self, file: Path, name: str) -> np.ndarray:
        """The tensor, through handles that live for one read each; a large float32 one a slice of rows
        per handle, so no more than a slice of the file is mapped beside the copy."""
        part = self._handle(file).get_slice(name)
        shape, dtype = part.get_shape(), part.get_dtype()
        size = int(np.prod(shape, dtype=np.int64)) * 4
        if dtype != "F32" or len(shape) < 2 or size <= SLICE_BYTES:
            return self._handle(file).get_tensor(name)
        out = np.empty(shape, np.float32)
        for lo, rows in self._row_slices(file, name, shape, max(1, shape[0] * SLICE_BYTES // size)):
            out[lo : lo + len(rows)] = rows
        return out

    def _row_slices(self, file: Path, name: str, shape, step: int):
        for lo in range(0, shape[0], step):
            yield lo, self._handle(file).get_slice(name)[lo : min(lo + step, shape[0])]

    def rows(self, name: str, step: int):
        """A float32 matrix's rows, `step` at a time (the whole tensor at once where it is not float32),
        each read through a handle of its own: a reader that keeps only what it makes of them (a
        quantized head) never holds the float tensor."""
        file = self._where.get(name)
        part = self._handle(file).get_slice(name) if file is not None else None
        if part is None or part.get_dtype() != "F32" or len(part.get_shape()) != 2:
            arr = self.get(name)
            yield from (arr[i : i + step] for i in range(0, arr.shape[0], step))
            return
        for _, rows in self._row_slices(file, name, part.get_shape(), step):
            yield rows

    def view(self, name: str) -> np.ndarray | None:
        """A float32 tensor as a read-only memory map of its bytes in the file (nothing read until
        touched), or None where it is stored as another dtype (get() converts a copy)."""
        file = self._where.get(name)
        if file is None:
            return None
        if file not in self._headers:
            self._headers[file] = _header(file)
        data_start, header = self._headers[file]
        entry = header[name]
        if entry["dtype"] != "F32":
            return None
        start, end = entry["data_offsets"]
        shape = tuple(entry["shape"])
        if end - start != 4 * int(np.prod(shape, dtype=np.int64)):
            raise MnnError(f"{file}: tensor {name!r}: {end - start} bytes for float32 {shape}")
        if end == start:
            return np.zeros(shape, np.float32)
        return np.memmap(file, dtype="<f4", mode="r", offset=data_start + start, shape=shape)

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self._handle(self._where[name]).get_slice(name).get_shape()) if name in self._where else ()

    def names(self) -> list[str]:
        return sorted(self._where)

    def __contains__(self, name: str) -> bool:
        return name in self._where

    def get(self, name: str) -> np.ndarray:
        """The tensor as float32 (or its integer dtype)."""
        if name not in self._where:
            raise MnnError(
                f"checkpoint has no tensor {name!r} (it has {len(self._where)} tensors, "
                f"e.g. {', '.join(self.names()[:4])})"
            )
        file = self._where[name]
        try:
            arr = self._read(file, name)
        except (TypeError, ValueError) as exc:
            if "bf16" not in str(exc).lower() and "bfloat16" not in str(exc).lower():
                raise MnnError(f"{file}: tensor {name!r}: {exc}") from None
            arr = _bf16(file, name)
        if arr.dtype != np.float32 and (arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"):
            arr = arr.astype(np.float32)  # bfloat16 arrives as ml_dtypes' type where that is installed
        return arr


def _header(file: Path) -> tuple[int, dict]:
    """(offset of the data, the JSON header) of a safetensors file."""
    import json
    import struct

    with open(file, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        return 8 + size, json.loads(fh.read(size))


def _bf16(file: Path, name: str) -> np.ndarray:
    """A bfloat16 tensor as float32, read from the file's own bytes (offsets from its header)."""
    data_start, header = _header(file)
    entry = header[name]
    start, end = entry["data_offsets"]
    shape = tuple(entry["shape"])
    raw = np.memmap(file, dtype=np.uint16, mode="r", offset=data_start + start, shape=((end - start) // 2,))
    if raw.size != int(np.prod(shape)):
        raise MnnError(f"{file}: tensor {name!r}: {raw.size} values for shape {shape}")
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(shape)

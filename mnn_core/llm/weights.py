"""Checkpoint tensors from `*.safetensors`, opened memory-mapped by the safetensors package.

Tensors are read by name on demand, so a loader touches only the pages it uses. bfloat16 (which
numpy lacks) is widened to float32 here: its bits are the top half of a float32's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import MnnError


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
        self._where: dict[str, object] = {}
        self._handles = []
        for file in files:
            try:
                # framework "pt" only reads bf16 as torch does; "numpy" serves every other dtype
                handle = safe_open(str(file), framework="numpy")
            except Exception as exc:  # the package raises its own error types for a damaged header
                raise MnnError(f"{file}: not a readable safetensors file ({exc})") from None
            self._handles.append((file, handle))
            for name in handle.keys():
                self._where[name] = (file, handle)

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
        file, handle = self._where[name]
        try:
            arr = handle.get_tensor(name)
        except (TypeError, ValueError) as exc:
            if "bf16" not in str(exc).lower() and "bfloat16" not in str(exc).lower():
                raise MnnError(f"{file}: tensor {name!r}: {exc}") from None
            arr = _bf16(file, name)
        if arr.dtype != np.float32 and (arr.dtype.kind == "f" or arr.dtype.name == "bfloat16"):
            arr = arr.astype(np.float32)  # bfloat16 arrives as ml_dtypes' type where that is installed
        return arr


def _bf16(file: Path, name: str) -> np.ndarray:
    """A bfloat16 tensor as float32, read from the file's own bytes (offsets from its header)."""
    import json
    import struct

    with open(file, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    entry = header[name]
    start, end = entry["data_offsets"]
    shape = tuple(entry["shape"])
    raw = np.memmap(file, dtype=np.uint16, mode="r", offset=8 + size + start, shape=((end - start) // 2,))
    if raw.size != int(np.prod(shape)):
        raise MnnError(f"{file}: tensor {name!r}: {raw.size} values for shape {shape}")
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(shape)

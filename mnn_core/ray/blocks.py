"""The input of `mnn batch` cut into numbered blocks, and each block's output as one Parquet file.

Input: a folder of .npy files (one row each, for a one-input model) or .npz files (one array per
input name), or a Parquet file or folder of them (a column per input). The blocks are fixed by the
input alone (sorted file names, `block_rows`), so a rerun cuts them the same way and can skip the
blocks whose `part-NNNNNN.parquet` exists. A part is written under a temporary name and renamed into
place, so it exists whole or not at all, and writing a block twice (a retried task) writes the same
file twice: no row is lost or duplicated.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, MnnError

MANIFEST = "_mnn_batch.json"


@dataclass(frozen=True)
class Block:
    index: int
    first_row: int  # the global index of its first row
    files: tuple[str, ...]  # .npy/.npz rows, or the one Parquet file
    offset: int = 0  # Parquet: the first row inside the file
    rows: int = 0


def plan_blocks(source: str | os.PathLike, block_rows: int) -> tuple[list[Block], str]:
    """The blocks of an input, and a fingerprint of it (names and sizes) a rerun must match."""
    if not isinstance(block_rows, int) or block_rows < 1:
        raise MnnError(f"--block-rows must be a positive int, got {block_rows!r}")
    root = Path(source)
    if root.is_file() and root.suffix == ".parquet":
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.iterdir() if p.suffix in (".npy", ".npz", ".parquet") and p.is_file())
    else:
        raise InputError(f"--input {root}: no such file or folder; give a folder of .npy/.npz files or Parquet")
    kinds = {p.suffix for p in files}
    if not files:
        raise InputError(f"--input {root}: no .npy, .npz or .parquet files in it")
    if ".parquet" in kinds and len(kinds) > 1:
        raise InputError(f"--input {root} mixes Parquet with .npy/.npz files; keep one kind per folder")
    digest = hashlib.sha256()
    for p in files:
        digest.update(f"{p.name}\0{p.stat().st_size}\0".encode())
    if ".parquet" in kinds:
        return _parquet_blocks(files, block_rows), digest.hexdigest()
    names = [str(p) for p in files]
    blocks = [
        Block(i, start, tuple(names[start : start + block_rows]), 0, len(names[start : start + block_rows]))
        for i, start in enumerate(range(0, len(names), block_rows))
    ]
    return blocks, digest.hexdigest()


def _parquet_blocks(files: list[Path], block_rows: int) -> list[Block]:
    import pyarrow.parquet as pq

    blocks, row = [], 0
    for path in files:
        n = pq.ParquetFile(path).metadata.num_rows
        for offset in range(0, n, block_rows):
            rows = min(block_rows, n - offset)
            blocks.append(Block(len(blocks), row, (str(path),), offset, rows))
            row += rows
    return blocks


def read_block(block: Block, inputs: list[str]) -> dict[str, np.ndarray]:
    """A block's columns: one array per column (rows first), plus "id" (the file name) for .npy/.npz."""
    if block.files[0].endswith(".parquet"):
        return _read_parquet(block)
    rows: dict[str, list] = {}
    for name in block.files:
        if name.endswith(".npz"):
            with np.load(name, allow_pickle=False) as z:
                for k in z.files:
                    rows.setdefault(k, []).append(z[k])
        else:
            if len(inputs) != 1:
                raise InputError(
                    f"{name}: a .npy file holds one array, but the model has inputs "
                    f"{', '.join(inputs)}; give .npz files with one array per input"
                )
            rows.setdefault(inputs[0], []).append(np.load(name, allow_pickle=False))
    columns = {}
    for k, values in rows.items():
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise InputError(
                f"block {block.index}: {k} has rows of different shapes {sorted(shapes)[:3]}; "
                "batch inference needs one shape per input"
            )
        columns[k] = np.stack(values)
    columns["id"] = np.array([Path(f).name for f in block.files])
    return columns


def _read_parquet(block: Block) -> dict[str, np.ndarray]:
    import pyarrow.parquet as pq

    f = pq.ParquetFile(block.files[0])
    groups, start, first = [], 0, None
    for g in range(f.metadata.num_row_groups):  # only the row groups the block overlaps
        n = f.metadata.row_group(g).num_rows
        if start + n > block.offset and start < block.offset + block.rows:
            groups.append(g)
            first = start if first is None else first
        start += n
    table = f.read_row_groups(groups).slice(block.offset - first, block.rows)
    return {name: column_to_numpy(table.column(name)) for name in table.column_names}


def column_to_numpy(col) -> np.ndarray:
    """An Arrow column as one array, rows first: tensor columns (Arrow's or Ray's) and lists of numbers too."""
    import pyarrow as pa

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if hasattr(arr, "to_numpy_ndarray"):  # pa.FixedShapeTensorArray
        return arr.to_numpy_ndarray()
    if isinstance(arr, pa.ExtensionArray):  # Ray Data's tensor columns
        return np.asarray(arr.to_numpy(zero_copy_only=False))
    if pa.types.is_list(arr.type) or pa.types.is_fixed_size_list(arr.type) or pa.types.is_large_list(arr.type):
        return np.array(arr.to_pylist())
    return arr.to_numpy(zero_copy_only=False)


def write_part(out_dir: Path, block: Block, columns: dict[str, np.ndarray]) -> Path:
    """The block's rows as part-NNNNNN.parquet, written whole or not at all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if "row" in columns:
        raise MnnError("a column or model output is named 'row', the name of the output's row numbers; rename it")
    arrays = {"row": pa.array(np.arange(block.first_row, block.first_row + block.rows, dtype=np.int64))}
    for name, value in columns.items():
        value = np.ascontiguousarray(value)
        arrays[name] = pa.FixedShapeTensorArray.from_numpy_ndarray(value) if value.ndim > 1 else pa.array(value)
    final = out_dir / f"part-{block.index:06d}.parquet"
    tmp = out_dir / f".{final.name}.{uuid.uuid4().hex}.tmp"
    try:
        pq.write_table(pa.table(arrays), tmp)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def done_blocks(out_dir: Path) -> set[int]:
    return {int(p.stem[5:]) for p in out_dir.glob("part-*.parquet") if p.stem[5:].isdigit()}


def check_manifest(out_dir: Path, expected: dict) -> None:
    """Write the run's description, or check that the one there describes this run (model, input, blocks)."""
    path = out_dir / MANIFEST
    if path.exists():
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise MnnError(f"{path} cannot be read ({exc}); delete it and the parts, or use a new --output") from None
        diff = [k for k in expected if found.get(k) != expected[k]]
        if diff:
            raise MnnError(
                f"{out_dir} holds the output of another run (its {', '.join(diff)} differ); use a new "
                "--output, or delete that folder to start over"
            )
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(expected, indent=1))
    os.replace(tmp, path)

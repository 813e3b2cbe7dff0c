"""A bounds-checked reader of FlatBuffers tables, for files nobody vouches for.

Every offset, vtable and vector is checked to lie inside the buffer before it
is read, and nesting is limited, so a hostile file gives MnnFormatError, never
an IndexError, a huge allocation or a recursion error. Only what mnn reads is
here: scalars, strings, tables, unions and vectors of those.
"""

from __future__ import annotations

import struct

import numpy as np

from ...errors import MnnFormatError

MAX_DEPTH = 64  # tables within tables: MNN's schema nests a few levels; a loop of offsets nests forever
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")
_SCALARS = {"bool": "<?", "int8": "<b", "uint8": "<B", "int16": "<h", "int32": "<i", "int64": "<q", "float32": "<f"}


class Buffer:
    """The file's bytes, and checked reads from them."""

    def __init__(self, data: bytes | memoryview, where: str):
        self.data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.size = len(data)
        self.where = where

    def fail(self, what: str) -> MnnFormatError:
        return MnnFormatError(f"{self.where}: not a valid MNN (FlatBuffers) model: {what}")

    def check(self, pos: int, n: int, what: str) -> None:
        if pos < 0 or n < 0 or pos + n > self.size:
            raise self.fail(f"{what} at byte {pos} (+{n}) lies outside the {self.size}-byte file")

    def u32(self, pos: int, what: str) -> int:
        self.check(pos, 4, what)
        return _U32.unpack_from(self.data, pos)[0]

    def scalar(self, pos: int, kind: str, what: str):
        fmt = _SCALARS[kind]
        self.check(pos, struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self.data, pos)[0]

    def root(self) -> Table:
        return Table(self, self.u32(0, "root offset"), "root table", 0)


class Table:
    """One table: its fields by index (the order in the schema; a union takes two)."""

    def __init__(self, buf: Buffer, pos: int, what: str, depth: int):
        if depth > MAX_DEPTH:
            raise buf.fail(f"{what} is nested more than {MAX_DEPTH} tables deep")
        buf.check(pos, 4, what)
        self.buf, self.pos, self.what, self.depth = buf, pos, what, depth
        vtable = pos - _I32.unpack_from(buf.data, pos)[0]
        buf.check(vtable, 4, f"vtable of {what}")
        vsize, self.tsize = _U16.unpack_from(buf.data, vtable)[0], _U16.unpack_from(buf.data, vtable + 2)[0]
        if vsize < 4 or vsize % 2:
            raise buf.fail(f"vtable of {what} has size {vsize}")
        buf.check(vtable, vsize, f"vtable of {what}")
        buf.check(pos, self.tsize, what)
        self.vtable, self.nfields = vtable, (vsize - 4) // 2

    def _field(self, index: int) -> int:
        """The field's position, or 0 when absent (its default applies)."""
        if index >= self.nfields:
            return 0
        off = _U16.unpack_from(self.buf.data, self.vtable + 4 + 2 * index)[0]
        if off and off >= self.tsize:
            raise self.buf.fail(f"field {index} of {self.what} points past the table's {self.tsize} bytes")
        return self.pos + off if off else 0

    def scalar(self, index: int, kind: str, default=0):
        pos = self._field(index)
        return self.buf.scalar(pos, kind, f"field {index} of {self.what}") if pos else default

    def _target(self, index: int, what: str) -> int:
        pos = self._field(index)
        if not pos:
            return 0
        return pos + self.buf.u32(pos, what)

    def table(self, index: int, what: str) -> Table | None:
        pos = self._target(index, what)
        return Table(self.buf, pos, what, self.depth + 1) if pos else None

    def string(self, index: int, what: str, default: str = "") -> str:
        pos = self._target(index, what)
        return _string(self.buf, pos, what) if pos else default

    def _vector(self, index: int, itemsize: int, what: str) -> tuple[int, int]:
        pos = self._target(index, what)
        if not pos:
            return 0, 0
        n = self.buf.u32(pos, f"length of {what}")
        self.buf.check(pos + 4, n * itemsize, what)
        return pos + 4, n

    def array(self, index: int, dtype: str, what: str) -> np.ndarray | None:
        """A vector of scalars as a numpy array (a copy), or None when absent."""
        dt = np.dtype(dtype).newbyteorder("<")
        start, n = self._vector(index, dt.itemsize, what)
        if not start:
            return None
        return np.frombuffer(self.buf.data, dtype=dt, count=n, offset=start).astype(dtype)

    def ints(self, index: int, what: str) -> list[int]:
        a = self.array(index, "int32", what)
        return [] if a is None else [int(v) for v in a]

    def tables(self, index: int, what: str) -> list[Table]:
        start, n = self._vector(index, 4, what)
        return [
            Table(self.buf, start + 4 * i + self.buf.u32(start + 4 * i, what), f"{what}[{i}]", self.depth + 1)
            for i in range(n)
        ]

    def strings(self, index: int, what: str) -> list[str]:
        start, n = self._vector(index, 4, what)
        return [_string(self.buf, start + 4 * i + self.buf.u32(start + 4 * i, what), f"{what}[{i}]") for i in range(n)]

    def union(self, type_index: int, what: str) -> tuple[int, Table | None]:
        """(type code, table) of a union whose type field is `type_index` (its value is the next one)."""
        code = self.scalar(type_index, "uint8")
        return code, (self.table(type_index + 1, what) if code else None)


def _string(buf: Buffer, pos: int, what: str) -> str:
    n = buf.u32(pos, f"length of {what}")
    buf.check(pos + 4, n, what)
    try:
        return bytes(buf.data[pos + 4 : pos + 4 + n]).decode("utf-8")
    except UnicodeDecodeError:
        raise buf.fail(f"{what} is not UTF-8 text") from None

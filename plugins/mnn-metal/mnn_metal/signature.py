"""What each generated kernel expects, read from its MSL: the contract the host must meet.

For every `.metal` file: the kernel function's name (spirv-cross renames one
that clashes with an MSL keyword: `cast` becomes `_cast`), its buffer
arguments by index (read-only `const device`, written `device`, the parameters
`constant`), the byte size of the parameter struct, and the specialization
constants it takes, as Metal function constants or as preprocessor macros.
Tests compare every planned dispatch against this, so a drift between the
Vulkan shaders' bindings and the Python recording is caught on Linux.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from . import msl

_KERNEL = re.compile(r"^kernel void (\w+)\((.*)\)\s*$", re.M)
_BUFFER = re.compile(r"(const device|device|constant) (\w+)& (\w+) \[\[buffer\((\d+)\)\]\]")
_STRUCT = re.compile(r"^struct (\w+)\n\{\n(.*?)\n\};", re.M | re.S)
_FIELD = re.compile(r"^\s*(\w+) (\w+)(?:\[(\d+)\])?;\s*$")
_FUNCTION_CONSTANT = re.compile(r"\[\[function_constant\((\d+)\)\]\]")
_MACRO = re.compile(r"#define SPIRV_CROSS_CONSTANT_ID_(\d+) (\d+)u?")

#: (size, alignment) of the scalar and vector types a parameter struct may hold
_TYPES = {
    "uint": (4, 4),
    "int": (4, 4),
    "float": (4, 4),
    "half": (2, 2),
    "short": (2, 2),
    "ushort": (2, 2),
    "char": (1, 1),
    "uchar": (1, 1),
    "uint2": (8, 8),
    "int2": (8, 8),
    "float2": (8, 8),
    "uint4": (16, 16),
    "int4": (16, 16),
    "float4": (16, 16),
}


@dataclass(frozen=True)
class BufferArg:
    index: int
    space: str  # "const device" (read), "device" (written), "constant" (parameters)
    type: str
    element: str = ""  # a tensor's element type: the runtime array's ("half", "float", "uint", ...)

    @property
    def writable(self) -> bool:
        return self.space == "device"


@dataclass(frozen=True)
class KernelSignature:
    name: str  # the shader's (and .metal file's) name
    function: str  # the kernel function in the MSL
    buffers: dict  # index -> BufferArg
    params_size: int  # bytes of the parameter struct at PARAMS_INDEX (0: none)
    function_constants: tuple  # ids set through MTLFunctionConstantValues
    macros: dict  # id -> default, set as SPIRV_CROSS_CONSTANT_ID_<id> when compiling

    @property
    def tensor_indices(self) -> list[int]:
        return sorted(i for i, b in self.buffers.items() if b.space != "constant")


def struct_size(fields: str, structs: dict) -> tuple[int, int]:
    """(size, alignment) of an MSL struct body as spirv-cross writes parameter blocks."""
    offset, align = 0, 1
    for line in fields.splitlines():
        m = _FIELD.match(line)
        if not m:
            raise ValueError(f"unexpected parameter field {line.strip()!r}")
        kind, _, count = m.groups()
        if kind in _TYPES:
            size, a = _TYPES[kind]
        elif kind in structs:
            size, a = struct_size(structs[kind], structs)
        else:
            raise ValueError(f"unknown type {kind!r} in a parameter struct")
        offset = -(-offset // a) * a + size * int(count or 1)
        align = max(align, a)
    return -(-offset // align) * align, align


def _element(fields: str) -> str:
    """The element type of a tensor's struct: spirv-cross writes a storage buffer of a
    runtime array as `struct _N { half _m0[1]; };`."""
    lines = fields.splitlines()
    m = _FIELD.match(lines[0]) if len(lines) == 1 else None
    return m.group(1) if m and m.group(3) == "1" else ""


def parse(name: str, text: str) -> KernelSignature:
    kernels = _KERNEL.findall(text)
    if len(kernels) != 1:
        raise ValueError(f"{name}.metal: expected one kernel function, found {len(kernels)}")
    function, args = kernels[0]
    structs = dict(_STRUCT.findall(text))
    buffers = {}
    for space, type_, _, index in _BUFFER.findall(args):
        if int(index) in buffers:
            raise ValueError(f"{name}.metal: two arguments at buffer({index})")
        buffers[int(index)] = BufferArg(int(index), space, type_, _element(structs.get(type_, "")))
    params = [b for b in buffers.values() if b.space == "constant"]
    if len(params) > 1:
        raise ValueError(f"{name}.metal: {len(params)} constant buffers; the parameters are one")
    if params and params[0].index != msl.PARAMS_INDEX:
        raise ValueError(f"{name}.metal: parameters at buffer({params[0].index}), not {msl.PARAMS_INDEX}")
    size = struct_size(structs[params[0].type], structs)[0] if params else 0
    constants = tuple(sorted({int(i) for i in _FUNCTION_CONSTANT.findall(text)}))
    macros = {int(i): int(v) for i, v in _MACRO.findall(text)}
    return KernelSignature(name, function, buffers, size, constants, macros)


@functools.cache
def signature(name: str) -> KernelSignature:
    return parse(name, msl.source(name))


def all_signatures() -> dict[str, KernelSignature]:
    return {name: signature(name) for name in msl.names()}

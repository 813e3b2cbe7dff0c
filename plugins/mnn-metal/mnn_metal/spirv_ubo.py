"""Push constants to a uniform buffer at an explicit binding, in a SPIR-V module.

mnn-vulkan's shaders take their parameters as push constants and their
tensors at bindings 0, 1, 2, .... spirv-cross's `--msl-decoration-binding`
keeps those binding numbers as Metal buffer indices (so the host binds tensor
i at index i, as on Vulkan), but it also puts the push-constant block at
buffer(0), on top of binding 0. Metal has no push constants anyway (a small
`setBytes` buffer plays their part), so before translating we turn the block
into a uniform buffer at descriptor set 0, binding PARAMS_INDEX: its explicit
member offsets are unchanged, so the bytes the Vulkan recorder packs are the
bytes the Metal kernel reads.

A word-level rewrite of the module (no SPIR-V library needed): every
OpTypePointer and OpVariable in the PushConstant storage class moves to
Uniform, and the variable gets DescriptorSet and Binding decorations.
"""

from __future__ import annotations

import struct

#: the Metal buffer index of every kernel's parameters (well above any tensor binding;
#: Metal's argument table holds buffers 0..30)
PARAMS_INDEX = 30

MAGIC = 0x07230203
OP_DECORATE, OP_MEMBER_DECORATE, OP_TYPE_POINTER, OP_VARIABLE = 71, 72, 32, 59
DECORATION_BINDING, DECORATION_DESCRIPTOR_SET = 33, 34
SC_UNIFORM, SC_PUSH_CONSTANT = 2, 9


def _instructions(words: list[int]):
    """(index of the first word, opcode, word count) of every instruction after the header."""
    i = 5
    while i < len(words):
        count, opcode = words[i] >> 16, words[i] & 0xFFFF
        if count == 0 or i + count > len(words):
            raise ValueError(f"malformed SPIR-V: instruction at word {i} has length {count}")
        yield i, opcode, count
        i += count


def push_constants_to_ubo(spirv: bytes, binding: int = PARAMS_INDEX) -> bytes:
    """The module with its push-constant block (if any) as a uniform buffer at `binding`."""
    if len(spirv) % 4 or len(spirv) < 20:
        raise ValueError("not a SPIR-V module (length is not a whole number of words)")
    words = list(struct.unpack(f"<{len(spirv) // 4}I", spirv))
    if words[0] != MAGIC:
        raise ValueError("not a little-endian SPIR-V module (bad magic number)")
    variables, last_annotation = [], None
    for i, opcode, count in _instructions(words):
        if opcode in (OP_DECORATE, OP_MEMBER_DECORATE):
            last_annotation = i + count
        elif opcode == OP_TYPE_POINTER and words[i + 2] == SC_PUSH_CONSTANT:
            words[i + 2] = SC_UNIFORM
        elif opcode == OP_VARIABLE and words[i + 3] == SC_PUSH_CONSTANT:
            words[i + 3] = SC_UNIFORM
            variables.append(words[i + 2])
    if not variables:
        return spirv
    if len(variables) > 1:
        raise ValueError(f"{len(variables)} push-constant blocks; a shader has at most one")
    if last_annotation is None:
        raise ValueError("a push-constant block without decorations (no Block/Offset): not from glslc")
    var = variables[0]
    extra = [
        (4 << 16) | OP_DECORATE,
        var,
        DECORATION_DESCRIPTOR_SET,
        0,
        (4 << 16) | OP_DECORATE,
        var,
        DECORATION_BINDING,
        binding,
    ]
    words[last_annotation:last_annotation] = extra
    return struct.pack(f"<{len(words)}I", *words)

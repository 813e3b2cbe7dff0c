"""The committed MSL cannot drift from the core kit's committed SPIR-V (mnn_core/backend/kit/shaders).

MSL.lock records, per kernel, the SHA-256 of the SPIR-V it was generated from
and of the MSL: without any tool, a rebuilt Vulkan shader whose MSL was not
regenerated fails here. Where spirv-cross is installed (the version that
generated the lock), every kernel is regenerated and compared byte for byte.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest
from mnn_metal import msl, signature, spirv_ubo

REGENERATE = "run `python tools/build_msl.py` in plugins/mnn-metal and commit the .metal files and MSL.lock"
have_spirv_cross = pytest.mark.skipif(
    msl.find_spirv_cross() is None, reason="spirv-cross not installed (Debian: apt-get install spirv-cross)"
)


def _spv(name: str) -> bytes:
    with open(os.path.join(msl.spirv_dir(), f"{name}.spv"), "rb") as f:
        return f.read()


def test_lock_matches_the_committed_msl():
    lock = msl.read_lock()
    assert sorted(lock["kernels"]) == msl.names(), f"MSL.lock and msl/*.metal list different kernels; {REGENERATE}"
    assert lock["params_index"] == msl.PARAMS_INDEX
    for name in msl.names():
        assert msl.sha256(msl.source(name).encode()) == lock["kernels"][name]["msl_sha256"], (
            f"{name}.metal was edited by hand or is stale; {REGENERATE}"
        )


def test_every_shared_shader_has_msl_from_its_current_spirv():
    lock = msl.read_lock()["kernels"]
    assert msl.names() == msl.spirv_names(), f"the kit's shaders and the Metal kernels differ; {REGENERATE}"
    for name in msl.spirv_names():
        assert msl.sha256(_spv(name)) == lock[name]["spirv_sha256"], (
            f"the kit's {name}.spv changed since its MSL was generated; {REGENERATE}"
        )


@have_spirv_cross
def test_regenerating_gives_the_committed_msl(tmp_path):
    tool = msl.find_spirv_cross()
    built_with = msl.read_lock()["spirv_cross"]
    if msl.spirv_cross_version(tool) != built_with:
        pytest.skip(f"installed spirv-cross is {msl.spirv_cross_version(tool)!r}; the MSL was made with {built_with!r}")
    for name in msl.spirv_names():
        assert msl.generate(name, _spv(name), tool, str(tmp_path)) == msl.source(name), (
            f"{name}.metal differs from a fresh translation; {REGENERATE}"
        )


def test_kernels_are_named_and_take_parameters_at_the_params_index():
    for name, sig in signature.all_signatures().items():
        assert sig.function.lstrip("_") == name, f"{name}.metal's kernel is {sig.function!r}"
        assert sig.tensor_indices == list(range(len(sig.tensor_indices))), (
            f"{name}: tensor buffers {sig.tensor_indices} are not the Vulkan bindings 0..n-1"
        )
        assert sig.params_size > 0 and sig.buffers[msl.PARAMS_INDEX].space == "constant"
        assert {0, 1, 2} <= set(sig.function_constants), f"{name}: threadgroup size is not a function constant"


def test_parameter_structs_have_the_size_of_the_vulkan_push_constants():
    """The UBO rewrite keeps member offsets: the MSL struct is as large as the push-constant
    block (the last member's offset plus its size, from the SPIR-V's own decorations)."""
    for name in msl.spirv_names():
        assert signature.signature(name).params_size == _push_block_size(_spv(name)), name


def _push_block_size(spirv: bytes) -> int:
    """Offset + size of the last member of the push-constant struct (scalars and arrays of 4-byte words)."""
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv)
    offsets, pointees, members, arrays, constants = {}, [], {}, {}, {}
    for i, op, n in spirv_ubo._instructions(list(words)):
        w = words[i : i + n]
        if op == 72 and w[3] == 35:  # OpMemberDecorate ... Offset
            offsets.setdefault(w[1], {})[w[2]] = w[4]
        elif op == 32 and w[2] == spirv_ubo.SC_PUSH_CONSTANT:  # OpTypePointer PushConstant
            pointees.append(w[3])
        elif op == 30:  # OpTypeStruct
            members[w[1]] = list(w[2:])
        elif op == 28:  # OpTypeArray
            arrays[w[1]] = w[3]
        elif op == 43:  # OpConstant
            constants[w[2]] = w[3]
    pointee = next(p for p in pointees if p in members)  # the block (other pointers reach its members)
    last = max(offsets[pointee].items(), key=lambda kv: kv[1])
    member_type = members[pointee][last[0]]
    return last[1] + 4 * (constants[arrays[member_type]] if member_type in arrays else 1)


def test_rewrite_leaves_no_push_constants_and_is_valid_spirv(tmp_path):
    for name in msl.spirv_names():
        out = spirv_ubo.push_constants_to_ubo(_spv(name))
        words = struct.unpack(f"<{len(out) // 4}I", out)
        for i, op, _ in spirv_ubo._instructions(list(words)):
            assert not (op == 32 and words[i + 2] == spirv_ubo.SC_PUSH_CONSTANT), name
            assert not (op == 59 and words[i + 3] == spirv_ubo.SC_PUSH_CONSTANT), name
        if shutil.which("spirv-val"):
            path = tmp_path / f"{name}.spv"
            path.write_bytes(out)
            proc = subprocess.run(
                ["spirv-val", "--target-env", "vulkan1.1", "--scalar-block-layout", str(path)],
                capture_output=True,
                text=True,
            )
            assert proc.returncode == 0, f"{name}: {proc.stderr or proc.stdout}"


def test_rewrite_rejects_what_is_not_spirv():
    with pytest.raises(ValueError, match="not a SPIR-V module"):
        spirv_ubo.push_constants_to_ubo(b"\x00" * 7)
    with pytest.raises(ValueError, match="bad magic"):
        spirv_ubo.push_constants_to_ubo(b"\x00" * 20)
    header = struct.pack("<5I", spirv_ubo.MAGIC, 0x10000, 0, 10, 0)
    with pytest.raises(ValueError, match="malformed"):
        spirv_ubo.push_constants_to_ubo(header + struct.pack("<I", (9 << 16) | 71))


def test_signature_parser_rejects_a_kernel_it_cannot_read():
    with pytest.raises(ValueError, match="expected one kernel"):
        signature.parse("broken", "using namespace metal;\n")

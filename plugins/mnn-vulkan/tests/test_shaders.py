"""The committed SPIR-V cannot drift from the GLSL sources.

SPIRV.lock records each shader's source hash (includes folded in) and binary
hash: the first test needs no tools and fails when a source changed without
`python tools/build_shaders.py`. Where glslc is installed (the same version
that built the lock), every shader is recompiled and compared byte for byte;
where spirv-val is, every binary is validated.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from mnn_vulkan import shaders

REBUILD = "run `python tools/build_shaders.py` at the checkout's root and commit the .spv files"


def test_lock_matches_sources_and_binaries():
    lock = shaders.read_lock()["shaders"]
    assert sorted(lock) == shaders.names(), f"shaders and SPIRV.lock list different names; {REBUILD}"
    for name in shaders.names():
        entry = lock[name]
        assert shaders.source_digest(name) == entry["source_sha256"], (
            f"{name}.comp changed since its SPIR-V was built; {REBUILD}"
        )
        spv = os.path.join(shaders.SHADER_DIR, f"{name}.spv")
        assert shaders.sha256_file(spv) == entry["spirv_sha256"], (
            f"{name}.spv is not the binary SPIRV.lock records; {REBUILD}"
        )


def test_every_spirv_has_a_source():
    spvs = sorted(f[:-4] for f in os.listdir(shaders.SHADER_DIR) if f.endswith(".spv"))
    assert spvs == shaders.names(), f"stray or missing .spv files; {REBUILD}"


@pytest.mark.skipif(shaders.find_glslc() is None, reason="glslc not installed (Debian: apt-get install glslc)")
def test_recompiling_gives_the_committed_binaries(tmp_path):
    glslc = shaders.find_glslc()
    built_with = shaders.read_lock()["glslc"]
    if shaders.glslc_version(glslc) != built_with:
        pytest.skip(f"installed glslc is {shaders.glslc_version(glslc)!r}; the binaries were built with {built_with!r}")
    for name in shaders.names():
        out = tmp_path / f"{name}.spv"
        shaders.compile_shader(name, str(out), glslc)
        committed = os.path.join(shaders.SHADER_DIR, f"{name}.spv")
        assert out.read_bytes() == open(committed, "rb").read(), f"{name}.spv differs from a fresh build; {REBUILD}"


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed (apt-get install spirv-tools)")
def test_binaries_are_valid_spirv():
    for name in shaders.names():
        path = os.path.join(shaders.SHADER_DIR, f"{name}.spv")
        proc = subprocess.run(["spirv-val", "--target-env", "vulkan1.1", path], capture_output=True, text=True)
        assert proc.returncode == 0, f"{name}.spv: {proc.stderr or proc.stdout}"

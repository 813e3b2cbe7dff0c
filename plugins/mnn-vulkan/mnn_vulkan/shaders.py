"""The compute shaders this backend runs: the core kit's (mnn_core.backend.kit.spirv, which
mnn-metal translates too), re-exported here for the tools and tests that name them."""

from __future__ import annotations

from mnn_core.backend.kit.spirv import (
    GLSLC_FLAGS,
    LOCK_FILE,
    SHADER_DIR,
    compile_shader,
    find_glslc,
    glslc_version,
    names,
    read_lock,
    sha256_file,
    source_digest,
    spirv,
)

__all__ = [
    "GLSLC_FLAGS",
    "LOCK_FILE",
    "SHADER_DIR",
    "compile_shader",
    "find_glslc",
    "glslc_version",
    "names",
    "read_lock",
    "sha256_file",
    "source_digest",
    "spirv",
]

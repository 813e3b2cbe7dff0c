"""The shared compute shaders: GLSL sources and their committed SPIR-V, in kit/shaders/.

mnn-vulkan runs the SPIR-V; mnn-metal runs MSL generated from it (its tools/build_msl.py).
Sources live in `shaders/*.comp` (with shared `*.glsl` includes); the SPIR-V
beside them is built by `python tools/build_shaders.py` (the checkout's root) with glslc and
committed, so installing needs no shader compiler. `shaders/SPIRV.lock` records, per
shader, the SHA-256 of its source (includes folded in) and of its SPIR-V, and the glslc
that built them; mnn-vulkan's tests/test_shaders.py fails when a source changed without
a rebuild, and recompiles and compares byte for byte where the same glslc is installed.
The files ship as mnn-core's package data.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Collection

SHADER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shaders")
LOCK_FILE = os.path.join(SHADER_DIR, "SPIRV.lock")
GLSLC_FLAGS = ("--target-env=vulkan1.1", "-O")
#: shaders built on Vulkan extensions that have no MSL translation (cooperative matrices), or
#: that only mnn-vulkan dispatches (gemm_big, the gemm_warp family, conv_warp, conv_dw7,
#: copy_tile_t and copy_tile_add, add_norm_rows): mnn-metal leaves them out
VULKAN_ONLY = frozenset(
    ["gemm_coop", "conv_coop", "gemm_big", "gemm_warp", "gemm_warp_wide", "gemm_warp_n96"]
    + ["conv_warp", "conv_dw7", "copy_tile_t", "copy_tile_add", "add_norm_rows"]
)
#: shaders with a float16 variant <name>_h.comp (float tensors stored as float16; see common.glsl),
#: which a recorder picks under float16 storage (copy_h is chosen by record_copy instead)
HALF_SHADERS = frozenset(
    ["conv2d", "conv_dw", "gemm", "gemv", "splitk_reduce", "binary", "unary", "pool2d", "reduce"]
    + ["batchnorm", "norm_rows", "softmax"]
)
#: ... and those with a <name>_hf variant that also multiplies and adds in float16 (see tile.glsl)
HALF_FMA_SHADERS = frozenset(["conv2d", "conv_dw", "gemm"])
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def names() -> list[str]:
    """Every shader, by name (the .comp file without its suffix)."""
    return sorted(f[:-5] for f in os.listdir(SHADER_DIR) if f.endswith(".comp"))


@functools.cache
def spirv(name: str) -> bytes:
    path = os.path.join(SHADER_DIR, f"{name}.spv")
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no SPIR-V for shader {name!r} at {path}; run tools/build_shaders.py "
            "(needs glslc) in a checkout or reinstall mnn-core"
        ) from None


def source_digest(name: str) -> str:
    """SHA-256 over the shader's source and, recursively, its includes."""
    h = hashlib.sha256()
    seen: set[str] = set()

    def add(filename: str) -> None:
        if filename in seen:
            return
        seen.add(filename)
        with open(os.path.join(SHADER_DIR, filename), "rb") as f:
            text = f.read()
        h.update(filename.encode() + b"\0" + text + b"\0")
        for inc in _INCLUDE.findall(text.decode()):
            add(inc)

    add(f"{name}.comp")
    return h.hexdigest()


def find_glslc() -> str | None:
    return os.environ.get("GLSLC") or shutil.which("glslc")


def glslc_version(glslc: str) -> str:
    out = subprocess.run([glslc, "--version"], capture_output=True, text=True, check=True).stdout
    return " / ".join(line.strip() for line in out.splitlines()[:2])


def compile_shader(name: str, out_path: str, glslc: str) -> None:
    src = os.path.join(SHADER_DIR, f"{name}.comp")
    proc = subprocess.run([glslc, *GLSLC_FLAGS, "-I", SHADER_DIR, src, "-o", out_path], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"glslc failed on {name}.comp:\n{proc.stderr}")


def read_lock() -> dict:
    with open(LOCK_FILE) as f:
        return json.load(f)


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def finish_generated(
    out_dir: str, suffix: str, made: Collection[str], stale: list[str], lock: dict, lock_file: str, check: bool
) -> int | None:
    """The end of a run of a generator whose outputs are committed with a lock (tools/build_shaders.py,
    mnn-metal's tools/build_msl.py). An output in `out_dir` (`NAME{suffix}`) whose NAME is not in `made`
    lost its source: it is stale too, and removed unless `check`. With `check`: prints what is stale
    and returns the exit status (1 where any is); else writes `lock` to `lock_file` and returns None."""
    for f in sorted(os.listdir(out_dir)):
        name = f[: -len(suffix)]
        if f.endswith(suffix) and name not in made:
            stale.append(name)
            if not check:
                os.remove(os.path.join(out_dir, f))
    if check:
        print("stale: " + ", ".join(stale) if stale else f"all {suffix.lstrip('.')} files up to date")
        return 1 if stale else 0
    with open(lock_file, "w") as f:
        json.dump(lock, f, indent=1, sort_keys=True)
        f.write("\n")
    return None

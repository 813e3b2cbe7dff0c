"""The Metal kernels: MSL generated from the core kit's committed SPIR-V.

Every shared compute shader (mnn_core/backend/kit/shaders/*.spv, the ones
mnn-vulkan runs, built from GLSL and locked to its source) is turned into one MSL file
`msl/<name>.metal` holding one kernel function named `<name>`:

    SPIR-V --(spirv_ubo: push constants -> uniform buffer at PARAMS_INDEX)-->
    spirv-cross --msl --msl-version 20300 --msl-decoration-binding
                --rename-entry-point main <name> comp

so tensor binding i of the Vulkan shader is Metal buffer index i, the
parameters (the very bytes Vulkan pushes) sit at buffer(PARAMS_INDEX), and the
Vulkan specialization constants become Metal function constants with the
same ids (the work-group size, 0..2), or, where a constant sizes a
threadgroup array (the GEMM tiling, 3..5), `SPIRV_CROSS_CONSTANT_ID_<id>`
preprocessor macros: the host compiles one library per kernel and macro set. `tools/build_msl.py` regenerates
the files; `msl/MSL.lock` records the SPIR-V each was generated from and the
spirv-cross that did it, and tests/test_msl.py checks both.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

from .spirv_ubo import PARAMS_INDEX, push_constants_to_ubo

MSL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "msl")
LOCK_FILE = os.path.join(MSL_DIR, "MSL.lock")
MSL_VERSION = "20300"  # MSL 2.3 (macOS 11): simdgroup reductions, half storage


def spirv_dir() -> str:
    """Where the committed SPIR-V is (the generator's input): the core kit's shaders, shipped with
    mnn-core (mnn_core.backend.kit.spirv)."""
    from mnn_core.backend.kit.spirv import SHADER_DIR

    return SHADER_DIR


def spirv_names() -> list[str]:
    """Every shader with committed SPIR-V, by name: the kernels to generate (not those on
    Vulkan-only extensions, which spirv-cross cannot translate)."""
    from mnn_core.backend.kit.spirv import VULKAN_ONLY

    return sorted(f[:-4] for f in os.listdir(spirv_dir()) if f.endswith(".spv") and f[:-4] not in VULKAN_ONLY)


def names() -> list[str]:
    """Every generated kernel, by name."""
    return sorted(f[:-6] for f in os.listdir(MSL_DIR) if f.endswith(".metal"))


def source(name: str) -> str:
    path = os.path.join(MSL_DIR, f"{name}.metal")
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no MSL for kernel {name!r} at {path}; run tools/build_msl.py or reinstall mnn-metal"
        ) from None


def find_spirv_cross() -> str | None:
    return os.environ.get("SPIRV_CROSS") or shutil.which("spirv-cross")


def spirv_cross_version(tool: str) -> str:
    """Its --revision, or (Debian's build prints only "(Debian package)") the package version."""
    proc = subprocess.run([tool, "--revision"], capture_output=True, text=True)
    text = (proc.stdout or proc.stderr).strip().splitlines()
    revision = text[0] if proc.returncode == 0 and text else "unknown"
    if "Debian package" in revision and shutil.which("dpkg-query"):
        pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "spirv-cross"], capture_output=True, text=True)
        if pkg.returncode == 0 and pkg.stdout:
            revision = f"spirv-cross {pkg.stdout} (Debian)"
    return revision


def spirv_cross_args(name: str) -> list[str]:
    return [
        "--msl",
        "--msl-version",
        MSL_VERSION,
        "--msl-decoration-binding",
        "--rename-entry-point",
        "main",
        name,
        "comp",
    ]


def generate(name: str, spirv: bytes, tool: str, workdir: str) -> str:
    """The MSL of one shader's SPIR-V (see the module docstring)."""
    spv = os.path.join(workdir, f"{name}.ubo.spv")
    with open(spv, "wb") as f:
        f.write(push_constants_to_ubo(spirv, PARAMS_INDEX))
    proc = subprocess.run([tool, spv, *spirv_cross_args(name)], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"spirv-cross failed on {name}.spv:\n{proc.stderr}")
    return proc.stdout


def read_lock() -> dict:
    with open(LOCK_FILE) as f:
        return json.load(f)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

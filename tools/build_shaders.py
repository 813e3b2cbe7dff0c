"""Compile the core kit's shaders (mnn_core/backend/kit/shaders/*.comp) to SPIR-V with glslc and write SPIRV.lock.

    python tools/build_shaders.py          # rebuild everything
    python tools/build_shaders.py --check  # exit 1 if a binary is stale

mnn-vulkan runs the SPIR-V; mnn-metal's tools/build_msl.py translates it to MSL.
Run after editing a shader and commit the .spv files with the sources.
spirv-val checks each binary when it is installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

# loaded by path: building shaders needs neither mnn_core nor the compiled runtime
_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mnn_core", "backend", "kit", "spirv.py")
_spec = importlib.util.spec_from_file_location("mnn_kit_spirv", _PATH)
shaders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shaders)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    glslc = shaders.find_glslc()
    if glslc is None:
        print("glslc not found (Debian: apt-get install glslc); set GLSLC to its path", file=sys.stderr)
        return 2
    spirv_val = shutil.which("spirv-val")
    lock = {"glslc": shaders.glslc_version(glslc), "flags": list(shaders.GLSLC_FLAGS), "shaders": {}}
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in shaders.names():
            out = os.path.join(tmp, f"{name}.spv")
            shaders.compile_shader(name, out, glslc)
            if spirv_val:
                subprocess.run([spirv_val, "--target-env", "vulkan1.1", out], check=True)
            committed = os.path.join(shaders.SHADER_DIR, f"{name}.spv")
            same = os.path.exists(committed) and shaders.sha256_file(committed) == shaders.sha256_file(out)
            if not same:
                stale.append(name)
                if not args.check:
                    shutil.copyfile(out, committed)
            lock["shaders"][name] = {
                "source_sha256": shaders.source_digest(name),
                "spirv_sha256": shaders.sha256_file(out),
            }
    done = shaders.finish_generated(
        shaders.SHADER_DIR, ".spv", lock["shaders"], stale, lock, shaders.LOCK_FILE, args.check
    )
    if done is not None:
        return done
    print(f"built {len(lock['shaders'])} shaders ({', '.join(stale) or 'none'} changed) with {lock['glslc']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

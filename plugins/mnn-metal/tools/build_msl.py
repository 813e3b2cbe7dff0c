"""Regenerate mnn_metal/msl/*.metal from the core kit's committed SPIR-V and write MSL.lock.

    python tools/build_msl.py          # regenerate everything
    python tools/build_msl.py --check  # exit 1 if a committed .metal differs

Needs spirv-cross (Debian: apt-get install spirv-cross) and mnn-core (whose kit ships
the SPIR-V, mnn_core/backend/kit/shaders). Run after the checkout's `tools/build_shaders.py`
and commit the .metal files with MSL.lock.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile

from mnn_core.backend.kit.spirv import finish_generated

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name: str):
    """mnn_metal's pure modules by path: generating needs no Mac (and of mnn_core only the kit's files)."""
    path = os.path.join(_HERE, "..", "mnn_metal", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"mnn_metal.{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sys.modules.setdefault("mnn_metal", type(sys)("mnn_metal"))
_load("spirv_ubo")
msl = _load("msl")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    tool = msl.find_spirv_cross()
    if tool is None:
        print(
            "spirv-cross not found (Debian: apt-get install spirv-cross); set SPIRV_CROSS to its path", file=sys.stderr
        )
        return 2
    src = msl.spirv_dir()
    shaders = msl.spirv_names()
    lock = {
        "spirv_cross": msl.spirv_cross_version(tool),
        "args": msl.spirv_cross_args("NAME"),
        "params_index": msl.PARAMS_INDEX,
        "kernels": {},
    }
    stale = []
    os.makedirs(msl.MSL_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in shaders:
            with open(os.path.join(src, f"{name}.spv"), "rb") as f:
                spirv = f.read()
            text = msl.generate(name, spirv, tool, tmp)
            path = os.path.join(msl.MSL_DIR, f"{name}.metal")
            same = os.path.exists(path) and open(path).read() == text
            if not same:
                stale.append(name)
                if not args.check:
                    with open(path, "w") as f:
                        f.write(text)
            lock["kernels"][name] = {"spirv_sha256": msl.sha256(spirv), "msl_sha256": msl.sha256(text.encode())}
    done = finish_generated(msl.MSL_DIR, ".metal", lock["kernels"], stale, lock, msl.LOCK_FILE, args.check)
    if done is not None:
        return done
    print(f"generated {len(lock['kernels'])} kernels ({', '.join(stale) or 'none'} changed) with {lock['spirv_cross']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

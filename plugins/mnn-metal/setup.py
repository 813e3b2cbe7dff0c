"""Build of mnn-metal: pure Python everywhere, plus the native part on macOS only.

On macOS, mnn_metal._metal is compiled from mnn_metal/csrc/mnn_metal.m (Objective-C
with ARC, linked against the Metal and Foundation frameworks; the Xcode command-line
tools suffice). Anywhere else nothing is compiled, so `pip install` succeeds and the
backend reports "Metal needs macOS" at run time instead of failing with a compiler error.
MNN_METAL_NO_NATIVE=1 skips the native part on macOS too.

The C ABI header (mnn_core/include/mnn_core/abi.h) comes from an importable mnn_core,
else from this source tree (../../mnn_core); MNN_CORE_ROOT points elsewhere.
"""

import importlib.util
import os
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def mnn_core_include() -> str:
    candidates = [os.environ["MNN_CORE_ROOT"]] if os.environ.get("MNN_CORE_ROOT") else []
    spec = importlib.util.find_spec("mnn_core")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(os.path.dirname(list(spec.submodule_search_locations)[0]))
    candidates.append(os.path.normpath(os.path.join(HERE, "..", "..")))
    for root in candidates:
        include = os.path.join(root, "mnn_core", "include")
        if os.path.isfile(os.path.join(include, "mnn_core", "abi.h")):
            return include
    raise SystemExit(
        "mnn-metal build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first or set MNN_CORE_ROOT."
    )


def native_extensions() -> list:
    if sys.platform != "darwin" or os.environ.get("MNN_METAL_NO_NATIVE"):
        return []  # nothing Metal exists here: the backend says so at run time
    return [
        Extension(
            "mnn_metal._metal",
            ["mnn_metal/csrc/mnn_metal.m"],
            include_dirs=[mnn_core_include()],
            extra_compile_args=["-fobjc-arc", "-O2", "-Wall"],
            extra_link_args=["-framework", "Metal", "-framework", "Foundation"],
        )
    ]


os.chdir(HERE)
setup(ext_modules=native_extensions())

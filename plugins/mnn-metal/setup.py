"""Build of mnn-metal: pure Python everywhere, plus the native part on macOS only.

On macOS, mnn_metal._metal is compiled from mnn_metal/csrc/mnn_metal.m (Objective-C
with ARC, linked against the Metal and Foundation frameworks; the Xcode command-line
tools suffice). Anywhere else nothing is compiled, so `pip install` succeeds and the
backend reports "Metal needs macOS" at run time instead of failing with a compiler error.
MNN_METAL_NO_NATIVE=1 skips the native part on macOS too.

The C ABI header comes from mnn_core.backend.build.get_include(): the importable mnn_core's,
or, in an isolated build, this source tree's (../../mnn_core).
"""

import os
import runpy
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def native_extensions() -> list:
    if sys.platform != "darwin" or os.environ.get("MNN_METAL_NO_NATIVE"):
        return []  # nothing Metal exists here: the backend says so at run time
    try:  # the core's own lookup of its C ABI header, like numpy.get_include()
        from mnn_core.backend.build import get_include
    except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
        get_include = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))["get_include"]
    return [
        Extension(
            "mnn_metal._metal",
            ["mnn_metal/csrc/mnn_metal.m"],
            include_dirs=[get_include()],
            extra_compile_args=["-fobjc-arc", "-O2", "-Wall"],
            extra_link_args=["-framework", "Metal", "-framework", "Foundation"],
        )
    ]


os.chdir(HERE)
setup(ext_modules=native_extensions())

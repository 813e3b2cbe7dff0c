"""Build of mnn-opengl: one Cython module over a small C runtime (csrc/mgl.c).

Nothing OpenGL is needed to build: libEGL is opened with dlopen at run time and
every EGL/GL entry point is looked up then, so the package installs anywhere and
reports itself unavailable, with the reason, where there is no EGL. The compute
shaders are GLSL sources in mnn_opengl/shaders, compiled by the driver at first use.

The C ABI header (mnn_core/include/mnn_core/abi.h) comes from an importable
mnn_core when there is one, else from this source tree (../../mnn_core); set
MNN_CORE_ROOT to the folder holding mnn_core/ to point elsewhere.
"""

import importlib.util
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def mnn_core_include() -> str:
    candidates = []
    if os.environ.get("MNN_CORE_ROOT"):
        candidates.append(os.environ["MNN_CORE_ROOT"])
    spec = importlib.util.find_spec("mnn_core")  # locates without importing numpy or pluggy
    if spec is not None and spec.submodule_search_locations:
        candidates.append(os.path.dirname(list(spec.submodule_search_locations)[0]))
    candidates.append(os.path.normpath(os.path.join(HERE, "..", "..")))
    for root in candidates:
        include = os.path.join(root, "mnn_core", "include")
        if os.path.isfile(os.path.join(include, "mnn_core", "abi.h")):
            return include
    raise SystemExit(
        "mnn-opengl build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first, build from the mnn source tree, "
        "or set MNN_CORE_ROOT to the folder that contains mnn_core/."
    )


os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_opengl._gl",
    ["mnn_opengl/_gl.pyx", "mnn_opengl/csrc/mgl.c"],
    include_dirs=["mnn_opengl/csrc", mnn_core_include()],
    depends=["mnn_opengl/csrc/mgl.h"],
    extra_compile_args=["-O2", "-std=gnu11", "-Wall"],
    libraries=["dl", "pthread"],
)
setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))

"""Build of mnn-opengl: one Cython module over a small C runtime (csrc/mgl.c).

Nothing OpenGL is needed to build: libEGL is opened with dlopen at run time and
every EGL/GL entry point is looked up then, so the package installs anywhere and
reports itself unavailable, with the reason, where there is no EGL. The compute
shaders are GLSL sources in mnn_opengl/shaders, compiled by the driver at first use.

The C ABI header comes from mnn_core.backend.build.get_include(): the importable
mnn_core's, or, in an isolated build, this source tree's (../../mnn_core).
"""

import os
import runpy

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))

try:  # the core's own lookup of its C ABI header, like numpy.get_include()
    from mnn_core.backend.build import get_include
except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
    get_include = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))["get_include"]

os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_opengl._gl",
    ["mnn_opengl/_gl.pyx", "mnn_opengl/csrc/mgl.c"],
    include_dirs=["mnn_opengl/csrc", get_include()],
    depends=["mnn_opengl/csrc/mgl.h"],
    extra_compile_args=["-O2", "-std=gnu11", "-Wall"],
    libraries=["dl", "pthread"],
)
setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))

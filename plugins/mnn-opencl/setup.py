"""Build of mnn-opencl: one Cython module over a little C (loader + run function).

Nothing here needs OpenCL headers or libraries: csrc/mnn_cl.h vendors the
types and constants used, and csrc/cl_loader.c dlopens libOpenCL.so.1 at run
time. The C ABI header (mnn_core/abi.h) and its Cython mirror (abi.pxd) come from
mnn_core.backend.build: the importable mnn_core's, or, in an isolated build, this
source tree's (../../mnn_core).
"""

import glob
import os
import runpy

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_opencl/csrc"
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}

try:  # the core's own lookup of its C ABI header, like numpy.get_include()
    from mnn_core.backend.build import get_cython_include, get_include
except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
    build = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))
    get_cython_include, get_include = build["get_cython_include"], build["get_include"]

os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_opencl._cl",
    ["mnn_opencl/_cl.pyx"] + sorted(glob.glob(f"{CSRC}/*.c")),
    include_dirs=[CSRC, get_include()],
    depends=sorted(glob.glob(os.path.join(CSRC, "*"))) + sorted(glob.glob("mnn_opencl/*.pxi")),
    extra_compile_args=["-O2"],
    libraries=["dl"],
)
setup(ext_modules=cythonize([ext], include_path=[get_cython_include()], compiler_directives=DIRECTIVES))

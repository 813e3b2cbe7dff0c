"""Compiled parts of mnn-core: the memory planner, the run loop and eager dispatch's kernel call (Cython)."""

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# One set of directives for the whole project.
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}
# Python's CFLAGS carry -g: without -g0 and a stripped link the extensions ship debug info (several times their code).
NO_DEBUG = {"extra_compile_args": ["-O2", "-g0"], "extra_link_args": ["-s"]}

extensions = [
    Extension(
        "mnn_core.memory._planner",
        ["mnn_core/memory/_planner.pyx"],
        include_dirs=[np.get_include()],
        **NO_DEBUG,
    ),
    Extension(
        "mnn_core.runtime._runloop",
        ["mnn_core/runtime/_runloop.pyx"],
        include_dirs=["mnn_core/include", np.get_include()],
        **NO_DEBUG,
    ),
    Extension(
        "mnn_core.express._eager",
        ["mnn_core/express/_eager.pyx"],
        include_dirs=["mnn_core/include", np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        **NO_DEBUG,
    ),
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))

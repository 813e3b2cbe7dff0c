"""Compiled parts of mnn-core: the memory planner and the run loop (Cython)."""

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# One set of directives for the whole project.
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}

extensions = [
    Extension(
        "mnn_core.memory._planner",
        ["mnn_core/memory/_planner.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O2"],
    ),
    Extension(
        "mnn_core.runtime._runloop",
        ["mnn_core/runtime/_runloop.pyx"],
        include_dirs=["mnn_core/include", np.get_include()],
        extra_compile_args=["-O2"],
    ),
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))

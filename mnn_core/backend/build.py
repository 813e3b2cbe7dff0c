"""Where a compiled backend finds the core's C ABI when it builds, as numpy.get_include() does for numpy:

    from mnn_core.backend.build import get_cython_include, get_include

    Extension(..., include_dirs=[get_include()])  # #include "mnn_core/abi.h"
    cythonize(..., include_path=[get_cython_include()])  # from mnn_core.abi cimport mnn_tensor

This module imports only `os`, so a build environment that cannot import mnn_core (pip's isolated
build has neither numpy nor pluggy) runs this very file from the source tree with runpy.run_path:
the lookup is written here alone, and every plugin's setup.py asks it.
"""

from __future__ import annotations

import os

#: the mnn_core package folder this file belongs to (installed, or the source tree's)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _require(path: str) -> str:
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"mnn_core at {PACKAGE_DIR} lacks {os.path.relpath(path, PACKAGE_DIR)}, which compiled backends "
            "build against: reinstall mnn-core from its wheel or from the mnn source tree"
        )
    return path


def get_include() -> str:
    """The folder for a C extension's include_dirs, so `#include "mnn_core/abi.h"` resolves."""
    include = os.path.join(PACKAGE_DIR, "include")
    _require(os.path.join(include, "mnn_core", "abi.h"))
    return include


def get_cython_include() -> str:
    """The folder for cythonize's include_path, so `from mnn_core.abi cimport ...` (abi.pxd) resolves."""
    _require(os.path.join(PACKAGE_DIR, "abi.pxd"))
    return os.path.dirname(PACKAGE_DIR)

"""Where a compiled backend finds the core's C ABI when it builds, as numpy.get_include() does for numpy:

    from mnn_core.backend.build import get_cython_include, get_include

    Extension(..., include_dirs=[get_include()])  # #include "mnn_core/abi.h"
    cythonize(..., include_path=[get_cython_include()])  # from mnn_core.abi cimport mnn_tensor
                                                         # include "mnn_core/backend/execution.pxi"

This module imports only `os`, so a build environment that cannot import mnn_core (pip's isolated
build has neither numpy nor pluggy) runs this very file from the source tree with runpy.run_path:
the lookup is written here alone, and every plugin's setup.py asks it. MNN_CORE_ROOT, where set,
names the folder holding another mnn_core to build against (a second checkout, a patched copy).
"""

from __future__ import annotations

import os

#: the mnn_core package folder this file belongs to (installed, or the source tree's)
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _package(*parts: str) -> str:
    """A file of the mnn_core package to build against (see MNN_CORE_ROOT), which must exist."""
    root = os.environ.get("MNN_CORE_ROOT")
    package = os.path.join(root, "mnn_core") if root else PACKAGE_DIR
    path = os.path.join(package, *parts)
    if os.path.isfile(path):
        return path
    if root:
        raise FileNotFoundError(
            f"MNN_CORE_ROOT={root} holds no {os.path.join('mnn_core', *parts)}: unset it, or "
            "point it at the folder that holds the mnn_core to build against"
        )
    raise FileNotFoundError(
        f"mnn_core at {package} lacks {'/'.join(parts)}, which compiled backends build against: "
        "reinstall mnn-core from its wheel or from the mnn source tree"
    )


def get_include() -> str:
    """The folder for a C extension's include_dirs, so `#include "mnn_core/abi.h"` resolves."""
    return os.path.dirname(os.path.dirname(_package("include", "mnn_core", "abi.h")))


def get_cython_include() -> str:
    """The folder for cythonize's include_path, so `from mnn_core.abi cimport ...` (abi.pxd) and
    `include "mnn_core/backend/execution.pxi"` (the buffer and execution record classes) resolve."""
    return os.path.dirname(os.path.dirname(_package("abi.pxd")))

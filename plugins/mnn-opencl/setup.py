"""Build of mnn-opencl: one Cython module over a little C (loader + run function).

Nothing here needs OpenCL headers or libraries: csrc/mnn_cl.h vendors the
types and constants used, and csrc/cl_loader.c dlopens libOpenCL.so.1 at run
time. The C ABI header (mnn_core/abi.h) and its Cython mirror (abi.pxd) come
from an importable mnn_core, else from this source tree (../../mnn_core); set
MNN_CORE_ROOT to the folder holding mnn_core/ to point elsewhere.
"""

import glob
import importlib.util
import os

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_opencl/csrc"
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}


def _has_abi(root: str) -> bool:
    return os.path.isfile(os.path.join(root, "mnn_core", "abi.pxd")) and os.path.isfile(
        os.path.join(root, "mnn_core", "include", "mnn_core", "abi.h")
    )


def mnn_core_root() -> str:
    """The folder that holds mnn_core/ (abi.pxd and include/mnn_core/abi.h)."""
    candidates = []
    if os.environ.get("MNN_CORE_ROOT"):
        candidates.append(os.environ["MNN_CORE_ROOT"])
    spec = importlib.util.find_spec("mnn_core")  # locates without importing numpy or pluggy
    if spec is not None and spec.submodule_search_locations:
        candidates.append(os.path.dirname(list(spec.submodule_search_locations)[0]))
    candidates.append(os.path.normpath(os.path.join(HERE, "..", "..")))
    for root in candidates:
        if _has_abi(root):
            return root
    raise SystemExit(
        "mnn-opencl build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first, build from the mnn source tree, "
        "or set MNN_CORE_ROOT to the folder that contains mnn_core/."
    )


os.chdir(HERE)  # sources are named relative to this file
ROOT = mnn_core_root()
ext = Extension(
    "mnn_opencl._cl",
    ["mnn_opencl/_cl.pyx"] + sorted(glob.glob(f"{CSRC}/*.c")),
    include_dirs=[CSRC, os.path.join(ROOT, "mnn_core", "include")],
    depends=sorted(glob.glob(os.path.join(CSRC, "*"))) + sorted(glob.glob("mnn_opencl/*.pxi")),
    extra_compile_args=["-O2"],
    libraries=["dl"],
)
setup(ext_modules=cythonize([ext], include_path=[ROOT], compiler_directives=DIRECTIVES))

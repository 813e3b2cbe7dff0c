"""Build of mnn-vulkan: one Cython module over a small C runtime (csrc/mvk_*.c).

Nothing Vulkan is needed to build: libvulkan.so.1 is opened with dlopen at
run time and the declarations used are vendored in csrc/vk_min.h (generated
from the Khronos header by tools/gen_vk_min.py). The SPIR-V shaders are
the core kit's, committed under mnn_core/backend/kit/shaders/ (the checkout's
tools/build_shaders.py rebuilds them with glslc), so no shader compiler is needed either.

The C ABI header (mnn_core/include/mnn_core/abi.h) comes from an importable
mnn_core when there is one, else from this source tree (../../mnn_core); set
MNN_CORE_ROOT to the folder holding mnn_core/ to point elsewhere.
"""

import glob
import importlib.util
import os
import struct

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_vulkan/csrc"

if struct.calcsize("P") != 8:  # vk_min.h declares non-dispatchable handles as pointers
    raise SystemExit("mnn-vulkan builds for 64-bit platforms only")


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
        "mnn-vulkan build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first, build from the mnn source tree, "
        "or set MNN_CORE_ROOT to the folder that contains mnn_core/."
    )


os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_vulkan._vulkan",
    ["mnn_vulkan/_vulkan.pyx"] + sorted(glob.glob(f"{CSRC}/mvk_*.c")),
    include_dirs=[CSRC, mnn_core_include()],
    depends=sorted(glob.glob(f"{CSRC}/*.h")),
    extra_compile_args=["-O2", "-std=gnu11", "-Wall"],
    libraries=["dl", "pthread"],
)
setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))

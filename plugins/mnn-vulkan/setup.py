"""Build of mnn-vulkan: one Cython module over a small C runtime (csrc/mvk_*.c).

Nothing Vulkan is needed to build: libvulkan.so.1 is opened with dlopen at
run time and the declarations used are vendored in csrc/vk_min.h (generated
from the Khronos header by tools/gen_vk_min.py). The SPIR-V shaders are
the core kit's, committed under mnn_core/backend/kit/shaders/ (the checkout's
tools/build_shaders.py rebuilds them with glslc), so no shader compiler is needed either.

The C ABI header comes from mnn_core.backend.build.get_include(): the importable
mnn_core's, or, in an isolated build, this source tree's (../../mnn_core).
"""

import glob
import os
import runpy
import struct

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_vulkan/csrc"

if struct.calcsize("P") != 8:  # vk_min.h declares non-dispatchable handles as pointers
    raise SystemExit("mnn-vulkan builds for 64-bit platforms only")

try:  # the core's own lookup of its C ABI header, like numpy.get_include()
    from mnn_core.backend.build import get_include
except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
    get_include = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))["get_include"]

os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_vulkan._vulkan",
    ["mnn_vulkan/_vulkan.pyx"] + sorted(glob.glob(f"{CSRC}/mvk_*.c")),
    include_dirs=[CSRC, get_include()],
    depends=sorted(glob.glob(f"{CSRC}/*.h")),
    extra_compile_args=["-O2", "-std=gnu11", "-Wall"],
    libraries=["dl", "pthread"],
)
setup(ext_modules=cythonize([ext], compiler_directives={"language_level": 3}))

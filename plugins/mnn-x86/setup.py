"""Build of mnn-x86: one Cython module plus hand-written C kernels.

Each ISA level is its own translation unit with its own flags (never
-march=native); dispatch.c picks one at run time with cpuid:

    csrc/isa_scalar.c   -O3
    csrc/isa_avx2.c     -O3 -mavx2 -mfma
    csrc/isa_avx512.c   -O3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma
    csrc/isa_avx512_t14.c   the same kernels with a 14x32 GEMM tile (two 512-bit FMA units; dispatch.c)
    csrc/isa_avx512_t8.c    and with an 8x48 one (layers with few rows and many columns)
    csrc/isa_avx512_bf16.c   the same and -mavx512bf16 (bf16 GEMMs, precision="low")

The op modules added since (mnn_x86/_<family>.pyx with csrc/<family>/*.c,
see csrc/family.h) are extensions of their own: a few seconds each to build.
MNN_X86_EXTENSIONS=_movement,_math builds only those (and skips _x86).

The C ABI header (mnn_core/abi.h) and its Cython mirror (mnn_core/abi.pxd)
come from an importable mnn_core when there is one, else from this source
tree (../../mnn_core), so a build with isolation needs no mnn-core installed.
Set MNN_CORE_ROOT to the folder holding mnn_core/ to point elsewhere.
"""

import glob
import importlib.util
import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_x86/csrc"
IS_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
OPENMP = ["-fopenmp"]
# Python's CFLAGS carry -g: -g0 and a stripped link keep debug info out of the wheel (45 MB -> a few MB for _x86).
NO_DEBUG, STRIP = ["-g0"], ["-s"]
ISA_FLAGS = {
    "scalar": ["-O3"],
    "avx2": ["-O3", "-mavx2", "-mfma"] if IS_X86 else ["-O3"],
    "avx512": ["-O3", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mfma"] if IS_X86 else ["-O3"],
}
ISA_FLAGS["avx512_t14"] = ISA_FLAGS["avx512"]  # the same ISA with a 14x32 GEMM tile (chosen by an FMA probe)
ISA_FLAGS["avx512_t8"] = ISA_FLAGS["avx512"]  # ... and with an 8x48 one (chosen per layer)
ISA_FLAGS["avx512_bf16"] = ISA_FLAGS["avx512"] + (["-mavx512bf16"] if IS_X86 else [])
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
        "mnn-x86 build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first, build from the mnn source tree, "
        "or set MNN_CORE_ROOT to the folder that contains mnn_core/."
    )


class BuildExt(build_ext):
    """_x86: compiles each ISA translation unit with its own flags, then links them in."""

    def build_isa_extension(self, ext):
        objects = []
        for isa, flags in ISA_FLAGS.items():
            objects += self.compiler.compile(
                [f"{CSRC}/isa_{isa}.c"],
                output_dir=self.build_temp,
                include_dirs=ext.include_dirs,
                extra_postargs=flags + OPENMP + NO_DEBUG + ["-fPIC"],
                depends=ext.depends,
            )
        ext.extra_objects = list(ext.extra_objects or []) + objects
        build_ext.build_extension(self, ext)

    def build_extension(self, ext):
        if ext.name != "mnn_x86._x86":  # an op module: its own sources and flags, no ISA units
            return build_ext.build_extension(self, ext)
        return self.build_isa_extension(ext)


def _files(pattern: str) -> list:
    return sorted(f for f in glob.glob(pattern) if os.path.isfile(f))


def family_extension(pyx: str) -> Extension:
    """mnn_x86/_<family>.pyx and its kernels in csrc/<family>/ (csrc/family.h)."""
    family = os.path.basename(pyx)[1 : -len(".pyx")]
    return Extension(
        f"mnn_x86._{family}",
        [pyx] + _files(f"{CSRC}/{family}/*.c"),
        include_dirs=[CSRC, os.path.join(ROOT, "mnn_core", "include")],
        depends=_files(f"{CSRC}/{family}/*")
        + [f"{CSRC}/family.h", f"{CSRC}/ops.h", f"{CSRC}/x86.h", "mnn_x86/family.pxd", "mnn_x86/_x86.pxd"],
        extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math"] + NO_DEBUG,
        extra_link_args=STRIP,
        libraries=["m"],
    )


os.chdir(HERE)  # sources are named relative to this file
ROOT = mnn_core_root()
ext = Extension(
    "mnn_x86._x86",
    ["mnn_x86/_x86.pyx", f"{CSRC}/dispatch.c", f"{CSRC}/dispatch_bf16.c"] + _files(f"{CSRC}/op_*.c"),
    include_dirs=[CSRC, os.path.join(ROOT, "mnn_core", "include")],
    depends=_files(f"{CSRC}/*") + ["mnn_x86/_x86.pxd"] + _files("mnn_x86/_x86_*.pxi"),
    extra_compile_args=["-O2"] + OPENMP + NO_DEBUG,
    extra_link_args=OPENMP + STRIP,
    libraries=["m"],
)
extensions = [ext] + [family_extension(p) for p in sorted(glob.glob("mnn_x86/_*.pyx")) if not p.endswith("/_x86.pyx")]
if os.environ.get("MNN_X86_EXTENSIONS"):
    only = {f"mnn_x86.{n.strip()}" for n in os.environ["MNN_X86_EXTENSIONS"].split(",")}
    extensions = [e for e in extensions if e.name in only]
setup(
    ext_modules=cythonize(extensions, include_path=[ROOT, "."], compiler_directives=DIRECTIVES),
    cmdclass={"build_ext": BuildExt},
)

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
come from mnn_core.backend.build: the importable mnn_core's, or, in an isolated
build (which cannot import mnn_core), this source tree's (../../mnn_core).
"""

import glob
import os
import platform
import runpy
from concurrent.futures import ThreadPoolExecutor

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

try:  # the core's own lookup of its C ABI header, like numpy.get_include()
    from mnn_core.backend.build import get_cython_include, get_include
except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
    build = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))
    get_cython_include, get_include = build["get_cython_include"], build["get_include"]


#: compilers run at once: the extensions build side by side, and _x86's ISA units too (MNN_BUILD_JOBS)
JOBS = max(1, int(os.environ.get("MNN_BUILD_JOBS", 0)) or os.cpu_count() or 1)


class BuildExt(build_ext):
    """_x86: compiles each ISA translation unit with its own flags, then links them in. Extensions
    build in parallel (build_ext's `parallel`), and so do the ISA units, each a compiler process."""

    def finalize_options(self):
        build_ext.finalize_options(self)
        if not self.parallel:
            self.parallel = JOBS

    def build_isa_extension(self, ext):
        def compile_isa(item):
            isa, flags = item
            return self.compiler.compile(
                [f"{CSRC}/isa_{isa}.c"],
                output_dir=self.build_temp,
                include_dirs=ext.include_dirs,
                extra_postargs=flags + OPENMP + NO_DEBUG + ["-fPIC"],
                depends=ext.depends,
            )

        with ThreadPoolExecutor(max_workers=JOBS) as pool:
            objects = [obj for objs in pool.map(compile_isa, ISA_FLAGS.items()) for obj in objs]
        ext.extra_objects = list(ext.extra_objects or []) + objects
        build_ext.build_extension(self, ext)

    def build_extension(self, ext):
        if ext.name != "mnn_x86._x86":  # an op module: its own sources and flags, no ISA units
            return build_ext.build_extension(self, ext)
        return self.build_isa_extension(ext)


def _files(pattern: str) -> list:
    return sorted(f for f in glob.glob(pattern) if os.path.isfile(f))


#: kernels of another family that a family's extension compiles in too (each module its own copy of the object
#: code, one source): the recurrent layers' quantized products run on the integer family's u8 x s8 tiles
SHARED_SOURCES = {"recurrent": ["integer/qgemm.c", "integer/qgemv.c"]}


def family_extension(pyx: str) -> Extension:
    """mnn_x86/_<family>.pyx and its kernels in csrc/<family>/ (csrc/family.h), plus its SHARED_SOURCES."""
    family = os.path.basename(pyx)[1 : -len(".pyx")]
    shared = [f"{CSRC}/{f}" for f in SHARED_SOURCES.get(family, [])]
    return Extension(
        f"mnn_x86._{family}",
        [pyx] + _files(f"{CSRC}/{family}/*.c") + shared,
        include_dirs=[CSRC, get_include()],
        depends=_files(f"{CSRC}/{family}/*")
        + shared
        + [s[: -len(".c")] + ".h" for s in shared]
        + [f"{CSRC}/family.h", f"{CSRC}/ops.h", f"{CSRC}/x86.h", f"{CSRC}/thread_scratch.h"]
        + ["mnn_x86/family.pxd", "mnn_x86/_x86.pxd"],
        extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math"] + NO_DEBUG,
        extra_link_args=STRIP,
        libraries=["m"],
    )


os.chdir(HERE)  # sources are named relative to this file
ext = Extension(
    "mnn_x86._x86",
    ["mnn_x86/_x86.pyx", f"{CSRC}/dispatch.c", f"{CSRC}/dispatch_bf16.c"] + _files(f"{CSRC}/op_*.c"),
    include_dirs=[CSRC, get_include()],
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
    ext_modules=cythonize(
        extensions, include_path=[get_cython_include(), "."], compiler_directives=DIRECTIVES, nthreads=JOBS
    ),
    cmdclass={"build_ext": BuildExt},
)

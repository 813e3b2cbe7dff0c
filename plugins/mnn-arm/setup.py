"""Build of mnn-arm: one Cython module plus hand-written NEON C kernels.

On an aarch64 machine each kernel path is its own translation unit with its
own flags (never -march=native); caps.c picks one at run time from
getauxval(AT_HWCAP):

    csrc/fp32.c, eltwise.c, conv.c, int8.c, winograd.c, move.c, reduce.c,
         matmul_batch.c, math.c, resize.c, deconv.c, rnn.c, parallel.c,
         threads.c, select.c, conv3d.c, qlinear.c, ml.c, qlstm.c,
         scatter.c, caps.c, ops.c -O3 -march=armv8-a
    csrc/fp16.c, fp16h.c, fp16h_norm.c, winograd_fp16.c    -O3 -march=armv8.2-a+fp16
    csrc/int8_dot.c, qlstm_dot.c                           -O3 -march=armv8.2-a+dotprod

On any other machine nothing native is built: the package installs as pure
Python and the backend reports "needs an Arm (aarch64) CPU" (no compiler
errors about NEON intrinsics on x86).

The C ABI header and its Cython mirror come from mnn_core.backend.build: the
importable mnn_core's, or, in an isolated build, this source tree's (../../mnn_core).
"""

import os
import platform
import runpy

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = "mnn_arm/csrc"
IS_ARM = platform.machine().lower() in ("aarch64", "arm64")
BASE = ["-O3", "-march=armv8-a"]
#: translation unit -> its flags
PATH_UNITS = {
    "fp32.c": BASE,
    "eltwise.c": BASE,
    "conv.c": BASE,
    "int8.c": BASE,
    "winograd.c": BASE,
    "move.c": BASE,
    "reduce.c": BASE,
    "matmul_batch.c": BASE,
    "math.c": BASE,
    "resize.c": BASE,
    "deconv.c": BASE,
    "rnn.c": BASE,
    "parallel.c": BASE,
    "threads.c": BASE,
    "select.c": BASE,
    "conv3d.c": BASE,
    "qlinear.c": BASE,
    "ml.c": BASE,
    "qlstm.c": BASE,
    "scatter.c": BASE,
    "fp16.c": ["-O3", "-march=armv8.2-a+fp16"],
    "fp16h.c": ["-O3", "-march=armv8.2-a+fp16"],
    "fp16h_norm.c": ["-O3", "-march=armv8.2-a+fp16"],
    "winograd_fp16.c": ["-O3", "-march=armv8.2-a+fp16"],
    "int8_dot.c": ["-O3", "-march=armv8.2-a+dotprod"],
    "qlstm_dot.c": ["-O3", "-march=armv8.2-a+dotprod"],
}
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}


def extensions():
    if not IS_ARM:
        print(
            f"mnn-arm: this machine is {platform.machine()}, not aarch64: building no native code "
            "(the backend will report 'needs an Arm (aarch64) CPU')"
        )
        return [], {}
    from Cython.Build import cythonize
    from setuptools import Extension
    from setuptools.command.build_ext import build_ext

    try:  # the core's own lookup of its C ABI header, like numpy.get_include()
        from mnn_core.backend.build import get_cython_include, get_include
    except ImportError:  # pip's isolated build cannot import mnn_core: the source tree's copy (imports only os)
        build = runpy.run_path(os.path.join(HERE, "..", "..", "mnn_core", "backend", "build.py"))
        get_cython_include, get_include = build["get_cython_include"], build["get_include"]

    class BuildExt(build_ext):
        """Compiles each kernel path with its own flags, then links them in."""

        def build_extension(self, ext):
            objects = []
            for unit, flags in PATH_UNITS.items():
                objects += self.compiler.compile(
                    [f"{CSRC}/{unit}"],
                    output_dir=self.build_temp,
                    include_dirs=ext.include_dirs,
                    extra_postargs=flags + ["-fPIC"],
                    depends=ext.depends,
                )
            ext.extra_objects = list(ext.extra_objects or []) + objects
            super().build_extension(ext)

    ext = Extension(
        "mnn_arm._arm",
        ["mnn_arm/_arm.pyx", f"{CSRC}/caps.c", f"{CSRC}/ops.c"],
        include_dirs=[CSRC, get_include()],
        depends=sorted(os.path.join(CSRC, f) for f in os.listdir(os.path.join(HERE, CSRC))),
        extra_compile_args=BASE,
        libraries=["m", "pthread"],
    )
    modules = cythonize([ext], include_path=[get_cython_include()], compiler_directives=DIRECTIVES)
    return modules, {"build_ext": BuildExt}


os.chdir(HERE)
ext_modules, cmdclass = extensions()
setup(ext_modules=ext_modules, cmdclass=cmdclass)

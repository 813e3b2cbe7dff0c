"""Build of mnn-arm: one Cython module plus hand-written NEON C kernels.

On an aarch64 machine each kernel path is its own translation unit with its
own flags (never -march=native); caps.c picks one at run time from
getauxval(AT_HWCAP):

    csrc/fp32.c, eltwise.c, conv.c, int8.c, winograd.c, move.c, reduce.c,
         matmul_batch.c, math.c, resize.c, deconv.c, rnn.c, parallel.c,
         threads.c, select.c, caps.c, ops.c                 -O3 -march=armv8-a
    csrc/fp16.c, fp16h.c                                   -O3 -march=armv8.2-a+fp16
    csrc/int8_dot.c                                        -O3 -march=armv8.2-a+dotprod

On any other machine nothing native is built: the package installs as pure
Python and the backend reports "needs an Arm (aarch64) CPU" (no compiler
errors about NEON intrinsics on x86).

The C ABI header comes from an importable mnn_core, else from this source
tree (../../mnn_core); MNN_CORE_ROOT overrides.
"""

import importlib.util
import os
import platform

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
    "fp16.c": ["-O3", "-march=armv8.2-a+fp16"],
    "fp16h.c": ["-O3", "-march=armv8.2-a+fp16"],
    "int8_dot.c": ["-O3", "-march=armv8.2-a+dotprod"],
}
DIRECTIVES = {"boundscheck": False, "wraparound": False, "cdivision": True, "language_level": 3}


def mnn_core_root() -> str:
    candidates = [os.environ["MNN_CORE_ROOT"]] if os.environ.get("MNN_CORE_ROOT") else []
    spec = importlib.util.find_spec("mnn_core")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(os.path.dirname(list(spec.submodule_search_locations)[0]))
    candidates.append(os.path.normpath(os.path.join(HERE, "..", "..")))
    for root in candidates:
        if os.path.isfile(os.path.join(root, "mnn_core", "include", "mnn_core", "abi.h")):
            return root
    raise SystemExit(
        "mnn-arm build: cannot find the mnn C ABI header (mnn_core/include/mnn_core/abi.h). "
        f"Looked in: {', '.join(candidates)}. Install mnn-core first or set MNN_CORE_ROOT."
    )


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

    root = mnn_core_root()
    ext = Extension(
        "mnn_arm._arm",
        ["mnn_arm/_arm.pyx", f"{CSRC}/caps.c", f"{CSRC}/ops.c"],
        include_dirs=[CSRC, os.path.join(root, "mnn_core", "include")],
        depends=sorted(os.path.join(CSRC, f) for f in os.listdir(os.path.join(HERE, CSRC))),
        extra_compile_args=BASE,
        libraries=["m", "pthread"],
    )
    return cythonize([ext], include_path=[root], compiler_directives=DIRECTIVES), {"build_ext": BuildExt}


os.chdir(HERE)
ext_modules, cmdclass = extensions()
setup(ext_modules=ext_modules, cmdclass=cmdclass)

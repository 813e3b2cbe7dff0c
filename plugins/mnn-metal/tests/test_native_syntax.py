"""The macOS host (csrc/mnn_metal.m) at least parses, type-checks and obeys ARC.

Nothing Metal exists on Linux, so this compiles the file with clang
`-fsyntax-only -fobjc-arc` against tests/objc_stubs/: declarations-only stand-ins
for the Foundation and Metal API it calls, written from Apple's documented
signatures. It catches C and Objective-C mistakes, ARC violations and drift from
mnn_core's ABI header; it cannot tell whether the real SDK agrees with the stubs.
Skipped where no clang is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig

import pytest

import mnn_core

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "mnn_metal", "csrc", "mnn_metal.m")
CLANG = next(
    (c for c in ("clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14") if shutil.which(c)),
    None,
)


@pytest.mark.skipif(CLANG is None, reason="no clang (Debian: apt-get install clang)")
def test_objective_c_host_passes_clang_syntax_and_arc_checks():
    cmd = [
        CLANG,
        "-fsyntax-only",
        "-x",
        "objective-c",
        "-fobjc-arc",
        "-fobjc-runtime=macosx-11.0",
        "-Wall",
        "-Werror",
        "-I",
        os.path.join(HERE, "objc_stubs"),
        "-I",
        sysconfig.get_paths()["include"],
        "-I",
        mnn_core.get_include(),
        SOURCE,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_function_constants_are_all_uint():
    """The host sets every function constant as MTLDataTypeUInt."""
    import re

    from mnn_metal import msl

    for name in msl.names():
        types = set(re.findall(r"constant (\w+) \w+ \[\[function_constant\(\d+\)\]\]", msl.source(name)))
        assert types == {"uint"}, f"{name}.metal: function constants of type {types}"


def test_host_limits_fit_every_kernel():
    """The C side's parameter index and fixed-size dispatch records fit what the kernels take."""
    import re

    from mnn_metal import signature, spirv_ubo

    text = open(SOURCE).read()
    define = {k: int(v) for k, v in re.findall(r"#define (PARAMS_INDEX|MAX_BINDINGS|MAX_PARAMS) (\d+)", text)}
    assert define["PARAMS_INDEX"] == spirv_ubo.PARAMS_INDEX
    sigs = signature.all_signatures().values()
    assert max(len(s.tensor_indices) for s in sigs) <= define["MAX_BINDINGS"]
    assert max(s.params_size for s in sigs) <= define["MAX_PARAMS"]


@pytest.mark.skipif(CLANG is None, reason="no clang (Debian: apt-get install clang)")
def test_host_float16_copies_are_bit_exact_with_numpy(tmp_path):
    """precision="low": Buffer.write/read narrow float32 to the arena's float16 and widen it
    back in C (narrow_f32, widen_f16). Those two functions, cut from the host source and
    compiled as C here, must round exactly as numpy's cast (what PlanArena and the plans'
    runs on lavapipe assume): every float16 widened, random and edge floats narrowed."""
    import ctypes
    import re

    import numpy as np

    text = open(SOURCE).read()
    functions = re.findall(r"^static void (?:narrow_f32|widen_f16)\(.*?^\}\n", text, re.M | re.S)
    assert len(functions) == 2, "narrow_f32 / widen_f16 not found in the host source"
    c_file, lib_file = tmp_path / "half.c", tmp_path / "half.so"
    c_file.write_text("#include <stddef.h>\n" + "\n".join(f.replace("static void", "void", 1) for f in functions))
    proc = subprocess.run([CLANG, "-O2", "-shared", "-fPIC", str(c_file), "-o", str(lib_file)], capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    lib = ctypes.CDLL(str(lib_file))

    def call(fn, dst, src):
        fn(ctypes.c_void_p(dst.ctypes.data), ctypes.c_void_p(src.ctypes.data), ctypes.c_size_t(src.size))

    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    wide = np.empty(every.size, np.float32)
    call(lib.widen_f16, wide, every)
    want = every.astype(np.float32)
    assert np.array_equal(wide, want, equal_nan=True) and np.array_equal(np.signbit(wide), np.signbit(want))

    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 1.00048828125, 1.00146484375, 65504.0, 65519.99, 65520.0, 1e6, 2.98e-8, 5.96e-8, 1e-10]
    x = np.concatenate([rng.standard_normal(50000) * 1000, rng.standard_normal(50000) * 1e-5, edges, [np.inf, np.nan]])
    x = x.astype(np.float32)
    narrow = np.empty(x.size, np.float16)
    call(lib.narrow_f32, narrow, x)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    assert np.array_equal(narrow.view(np.uint16)[:-1], want.view(np.uint16)[:-1])  # bits, ties to even included
    assert np.isnan(narrow[-1])

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

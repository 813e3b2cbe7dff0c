"""The kernel source itself: it builds for both precisions. The fp16 variant
cannot build on PoCL (no cl_khr_fp16), so it is checked with clang's OpenCL
front end where clang is installed (PoCL brings clang-15)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import needs_opencl

CLANGS = ["clang-15", "clang", "/usr/lib/llvm-15/bin/clang"]


@pytest.mark.parametrize("defines", [[], ["-DMNN_FP16=1"]], ids=["fp32", "fp16"])
def test_source_passes_clang(tmp_path, defines):
    clang = next((c for c in CLANGS if shutil.which(c)), None)
    if clang is None:
        pytest.skip("no clang here to check the OpenCL C source")
    from mnn_opencl.runtime import kernel_source

    src = tmp_path / "all.cl"
    src.write_text(kernel_source())
    flags = [
        "-x",
        "cl",
        "-cl-std=CL1.2",
        "-Xclang",
        "-finclude-default-header",
        "-target",
        "spir64",
        "-Xclang",
        "-cl-ext=+cl_khr_fp16",
        "-Werror=implicit-function-declaration",
        "-fsyntax-only",
    ]
    out = subprocess.run([clang, *flags, *defines, str(src)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@needs_opencl
def test_program_has_every_kernel_the_ops_launch():
    import re

    from mnn_opencl import runtime

    rt = runtime.get_runtime(runtime.select_device())
    prog = rt.program("float32")
    source = runtime.kernel_source()
    names = {n for n in re.findall(r"__kernel void (\w+)\(", source)}
    names |= {
        f"{k}_{w}"
        for w in re.findall(r"^WIDTH_KERNELS\(\w+, (\d)\)", source, re.M)
        for k in ("copy_strided", "gather_table")
    }
    names |= {f"cast_{n}" for n in re.findall(r"^CAST_KERNEL\((\w+),", source, re.M)}
    names |= {f"gemm_{n}" for n in re.findall(r"^GEMM_TILED\((\w+),", source, re.M)}
    for k in ("gemm8", "conv8"):
        names |= {f"{k}_{n}" for n in re.findall(rf"^{k.upper()}\((\w+),", source, re.M)}
    names |= set(re.findall(r"^CONV4\((\w+),", source, re.M))
    for macro, k in (("COMPARE_KERNEL", "compare_bcast"), ("ARG_KERNEL", "arg_reduce")):
        names |= {f"{k}_{s}" for s in re.findall(rf"^{macro}\(\w+, (\w+)\)", source, re.M)}
    assert len(names) > 30
    for name in names:
        prog.kernel(name)  # raises CLError when missing
    assert {"conv2d_oc4", "conv1x1_oc4", "conv2d_c1", "matmul", "matvec_nk", "copy_strided"} <= names
    from mnn_opencl.ops_matmul import GEMM_TILINGS

    assert {f"gemm_{t}" for t in GEMM_TILINGS} <= names
    from mnn_opencl.blocks8 import BLOCKS

    assert {f"{k}_{t}" for k in ("gemm8", "conv8") for t in BLOCKS} <= names
    from mnn_opencl.blocks8 import CONV4_BLOCKS

    assert {f"conv4{p}_{t}" for t in CONV4_BLOCKS for p in ("", "p")} <= names


@needs_opencl
@pytest.mark.parametrize("split", [False, True], ids=["direct", "split-k"])
@pytest.mark.parametrize(
    "shape, wshape, attrs",
    [
        ((1, 64, 7, 7), (40, 64, 1, 1), {"activation": "relu"}),
        (
            (2, 48, 9, 5),
            (20, 48, 3, 3),
            {"pads": [1, 1, 1, 1], "strides": [2, 1], "activation": "clip", "act_alpha": 0.0, "act_beta": 6.0},
        ),
        ((1, 64, 6, 6), (32, 16, 3, 3), {"group": 4, "pads": [2, 2, 2, 2], "dilations": [2, 2]}),
        ((1, 33, 5, 11), (9, 33, 1, 3), {"pads": [0, 1, 0, 1], "activation": "silu"}),
    ],
    ids=["1x1", "3x3-stride", "grouped-dilated", "odd"],
)
def test_conv_variants(monkeypatch, rng, split, shape, wshape, attrs):
    import numpy as np
    from conftest import opencl_backend

    from mnn_core.graph.ir import Graph, Node, TensorInfo
    from mnn_core.ops import run_reference
    from mnn_core.session import Session

    # pin the variant: by default a GPU splits these small layers (and a CPU never does)
    monkeypatch.setenv("MNN_OPENCL_MIN_ITEMS", "1000000" if split else "0")
    x = rng.uniform(-1, 1, shape).astype("float32")
    w = rng.uniform(-1, 1, wshape).astype("float32")
    bias = rng.uniform(-1, 1, wshape[0]).astype("float32")
    graph = Graph(
        inputs={"x": TensorInfo(shape, "float32")},
        initializers={"w": w, "b": bias},
        nodes=[Node("Conv", ["x", "w", "b"], ["y"], attrs, "conv")],
        outputs=["y"],
    )
    sess = Session(graph, backend="opencl", fallback=False, optimize=False)
    got = sess.run({"x": x})["y"]
    assert opencl_backend().segments[-1]["launches"] == (2 if split else 1)
    np.testing.assert_allclose(got, run_reference("Conv", [x, w, bias], attrs)[0], rtol=1e-4, atol=1e-4)

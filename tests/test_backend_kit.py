"""mnn_core.backend: importing the contract loads no engine, the one kernel table, and the
activation codes that abi.h, the kit and the op schemas must agree on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import mnn_core
from mnn_core.backend import DeviceInfo, KernelSpec, KernelTable
from mnn_core.backend.kit import activation, layout
from mnn_core.ops.elementwise import ACTIVATIONS

ENGINE = (
    "mnn_core.session",
    "mnn_core.runtime.session",
    "mnn_core.memory.planner",
    "mnn_core.memory._planner",
    "mnn_core.runtime._runloop",
    "mnn_core.scheduler",
    "mnn_core.runtime.scheduler",
)


def test_importing_the_contract_loads_no_engine():
    code = (
        "import sys, mnn_core.backend, mnn_core.backend.kit.params, mnn_core.backend.kit.recorder; "
        f"print([m for m in {ENGINE!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_old_paths_still_import():
    import mnn_core.gpu.registry
    import mnn_core.hookspecs
    import mnn_core.plugins
    import mnn_core.registry
    from mnn_core import hookimpl
    from mnn_core.gpu import codes
    from mnn_core.gpu import layout as gpu_layout

    assert mnn_core.plugins.get_plugins is mnn_core.backend.get_plugins
    assert mnn_core.hookspecs.hookimpl is hookimpl is mnn_core.backend.hookimpl
    assert mnn_core.registry.backend_table is mnn_core.backend.status.backend_table
    assert gpu_layout is layout and codes is mnn_core.backend.kit.codes
    assert issubclass(mnn_core.gpu.registry.KernelTable, KernelTable)


def test_kernel_table_registers_and_guards():
    table = KernelTable(guard=lambda info: "too big" if info.size > 10 else None)

    @table.kernel("Relu", inplace=True, supports=lambda node, ins: True)
    def prepare(*args):
        return "prepared"

    table.add(KernelSpec("Exp"), lambda: None)
    assert table["Relu"].impl is prepare and table["Relu"].spec.inplace
    assert table["Relu"].spec.accepts(None, [SimpleNamespace(size=11, dtype="float32")]) == "too big"
    assert table["Relu"].spec.accepts(None, [SimpleNamespace(size=3, dtype="float32")]) is True
    assert set(table.specs()) == {"Relu", "Exp"} and set(table.specs({"Exp"})) == {"Exp"}


def test_activation_codes_agree_with_abi_h_and_the_op_schemas():
    header = open(os.path.join(mnn_core.get_include(), "mnn_core", "abi.h")).read()
    enum = re.search(r"enum mnn_activation \{(.*?)\}", header, re.S).group(1)
    in_header = {name.lower(): i for i, name in enumerate(re.findall(r"MNN_ACT_(\w+)", enum))}
    assert in_header == activation.ACT_CODES
    assert list(ACTIVATIONS) == sorted(activation.ACT_CODES, key=activation.ACT_CODES.get)
    assert activation.activation_code({"activation": "clip", "act_alpha": 0, "act_beta": 6}) == (2, 0.0, 6.0)
    assert activation.activation_code({}) == (0, 0.0, 0.0)
    defines = dict(re.findall(r"#define MNN_ACT_(\w+) (\d+)", activation.activation_defines()))
    assert {name.lower(): int(code) for name, code in defines.items()} == in_header


def test_c_kernels_keep_no_copy_of_the_activation_codes():
    """The plugins' C and OpenCL sources switch on abi.h's MNN_ACT_* names, not an enum of their own."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    plugins = os.path.join(root, "plugins")
    copies = []
    for plugin in ("mnn-x86", "mnn-arm", "mnn-opencl"):
        src = os.path.join(plugins, plugin, plugin.replace("-", "_"))
        for folder, _, files in os.walk(src):
            for name in files:
                if name.endswith((".c", ".h", ".cl")):
                    text = open(os.path.join(folder, name), errors="replace").read()
                    if re.search(r"\b(X86|ARM)_ACT_[A-Z]|enum (x86|arm)_act\b", text):
                        copies.append(os.path.relpath(os.path.join(folder, name), plugins))
    assert not copies, f"own copies of the fused-activation codes (use abi.h's enum mnn_activation): {copies}"
    common_cl = open(os.path.join(plugins, "mnn-opencl", "mnn_opencl", "kernels", "common.cl")).read()
    assert "case MNN_ACT_HARD_SWISH:" in common_cl and not re.search(r"case [0-9]+: return", common_cl)


def test_collapse_broadcast_for_a_binary_kernel():
    assert layout.collapse_broadcast((2, 3, 4), (2, 3, 4), (4,)) == ([6, 4], [4, 1], [0, 1])
    assert layout.collapse_broadcast((2, 3, 4), (2, 3, 4), (2, 3, 4)) == ([24], [1], [1])
    assert layout.collapse_broadcast((2, 3, 4), (2, 3, 4), (1, 3, 1)) == ([2, 3, 4], [12, 4, 1], [0, 1, 0])
    assert layout.collapse_broadcast((1, 1), (1, 1), (1,)) == ([1], [0], [0])
    assert layout.collapse_broadcast((2,) * 9, (2, 1) * 4 + (2,), (1, 2) * 4 + (1,)) is None
    assert layout.static_shape(SimpleNamespace(shape=(2, 3))) == (2, 3)


def test_view_is_a_flag_of_the_op_schema():
    from mnn_core.ops import get_schema
    from mnn_core.ops.schema import is_view, view_ops
    from mnn_core.runtime.scheduler import VIEW_OPS

    assert view_ops() == VIEW_OPS == {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}
    assert get_schema("Reshape").view and not get_schema("Transpose").view
    assert is_view("Squeeze") and not is_view("x86.ConvAdd")  # a backend's fused op has no schema


def test_build_paths_find_the_abi_header_and_its_cython_mirror():
    """What every plugin's setup.py asks (mnn_core.backend.build), imported or run by path as an isolated
    build runs it: the same folders, and the file imports nothing an isolated build lacks."""
    import ast
    import runpy

    from mnn_core.backend import build, get_cython_include, get_include

    assert os.path.isfile(os.path.join(get_include(), "mnn_core", "abi.h"))
    assert os.path.isfile(os.path.join(get_cython_include(), "mnn_core", "abi.pxd"))
    assert get_include() == mnn_core.get_include()
    by_path = runpy.run_path(build.__file__)
    assert (by_path["get_include"](), by_path["get_cython_include"]()) == (get_include(), get_cython_include())
    tree = ast.parse(open(build.__file__).read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"os", "__future__"}, imported


def test_build_paths_say_what_is_missing(tmp_path, monkeypatch):
    import runpy

    from mnn_core.backend import build

    monkeypatch.setenv("MNN_CORE_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="MNN_CORE_ROOT=.* holds no mnn_core/abi.pxd"):
        build.get_cython_include()
    monkeypatch.setenv("MNN_CORE_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(build.__file__))))
    assert build.get_cython_include() == os.path.dirname(os.path.dirname(os.path.dirname(build.__file__)))
    monkeypatch.delenv("MNN_CORE_ROOT")
    package = tmp_path / "mnn_core"
    (package / "backend").mkdir(parents=True)
    copy = package / "backend" / "build.py"
    copy.write_text(open(build.__file__).read())
    paths = runpy.run_path(str(copy))
    with pytest.raises(FileNotFoundError, match="lacks include/mnn_core/abi.h.*reinstall mnn-core"):
        paths["get_include"]()
    with pytest.raises(FileNotFoundError, match="lacks abi.pxd"):
        paths["get_cython_include"]()


def test_half_shader_sets_name_the_float16_variants():
    from mnn_core.backend.kit import spirv

    names = set(spirv.names())
    assert spirv.HALF_SHADERS == {n[:-2] for n in names if n.endswith("_h")} - {"copy"}  # copy_h: record_copy's
    assert spirv.HALF_FMA_SHADERS == {n[:-3] for n in names if n.endswith("_hf")}


def test_segment_backend_answers_from_its_reason_device_and_table():
    from mnn_core.backend.kit.segments import SegmentBackend, segment_name
    from mnn_core.errors import BackendError

    table = KernelTable()
    table.add(KernelSpec("Relu"), lambda op, rec: None)
    table.add(KernelSpec("NoSuchOp"), lambda op, rec: None)

    class Gpu(SegmentBackend):
        name = "gpu"
        kernel_table = table
        reason = None

        def unavailable_reason(self):
            return self.reason

        def device_info(self):
            if self.reason:
                raise BackendError(self.reason)
            return DeviceInfo("card", kind="gpu")

    gpu = Gpu()
    assert gpu.availability() and [d.name for d in gpu.devices()] == ["card"]
    assert set(gpu.kernels()) == {"Relu"}  # an op this core has no schema for is not offered
    gpu.reason = "no driver"
    assert not gpu.availability() and gpu.availability().reason == "no driver"
    assert [d.name for d in gpu.devices()] == ["gpu (unavailable)"]
    with pytest.raises(BackendError, match="prepares whole segments"):
        gpu.prepare(None, [], [], {}, None)
    ops = [SimpleNamespace(node=SimpleNamespace(name=n)) for n in ("conv1", "relu1", "fc")]
    assert segment_name("gpu", ops) == "gpu:conv1..fc" and segment_name("gpu", []) == "gpu:empty"


def test_gemm_fields_of_the_cpu_backends():
    from mnn_core.backend.kit.params import gemm_fields

    attrs = {"transA": 1, "transB": 0, "alpha": 0.5, "beta": 2.0, "activation": "relu"}
    p = gemm_fields(attrs, (5, 3), (3, 1), (3, 4))  # A (K=5, M=3) transposed, a C column broadcast along N
    assert (p["M"], p["N"], p["K"], p["batch"]) == (3, 4, 5, 1)
    assert (p["a_rs"], p["a_cs"], p["b_rs"], p["b_cs"]) == (1, 3, 4, 1)
    assert (p["bias_rs"], p["bias_cs"]) == (1, 0)
    assert (p["alpha"], p["beta"], p["act"]) == (0.5, 2.0, activation.ACT_CODES["relu"])
    assert (
        gemm_fields(attrs, (5, 3), None, (3, 4))["bias_rs"],
        gemm_fields(attrs, (5, 3), (4,), (3, 4))["bias_cs"],
    ) == (0, 1)


def test_load_native_reports_a_broken_install():
    from mnn_core.backend.kit.segments import load_native

    module, why = load_native("mnn_core.backend", "kit", "mnn-core")
    assert module is not None and why == ""
    module, why = load_native("mnn_core.backend", "_no_such_module", "mnn-foo")
    assert module is None and "failed to load (ModuleNotFoundError" in why and why.endswith("reinstall mnn-foo")

"""Loading, availability and device choice: what happens without a loader or
platform, GPU-first order, MNN_OPENCL_DEVICE and the "opencl.device" option,
and the precision chosen (fp32 wherever the device lacks cl_khr_fp16)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_opencl, opencl_backend

import mnn_core as mnn
from mnn_core.backend import PrepareContext

STATUS = (
    "import json, mnn_core as mnn\n"
    "row = next(r for r in mnn.backends() if r.name == 'opencl')\n"
    "try:\n"
    "    mnn.Session(mnn.GraphBuilder().build(), backend='opencl'); err = ''\n"
    "except mnn.MnnError as e:\n"
    "    err = str(e)\n"
    "print(json.dumps({'available': row.available, 'reason': row.reason, 'session_error': err}))\n"
)


def _status(**env):
    out = subprocess.run(
        [sys.executable, "-c", STATUS], env=dict(os.environ, **env), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_no_loader_is_unavailable_with_the_reason(tmp_path):
    status = _status(MNN_OPENCL_LIBRARY=str(tmp_path / "libOpenCL.so.1"))
    assert not status["available"]
    assert "cannot load the OpenCL ICD loader" in status["reason"] and "libOpenCL.so.1" in status["reason"]
    assert "not available here" in status["session_error"] and "ICD loader" in status["session_error"]


def test_no_platform_is_unavailable_with_the_reason(tmp_path):
    status = _status(OCL_ICD_VENDORS=str(tmp_path))  # ocl-icd: an empty vendors folder
    if status["available"]:
        pytest.skip("this ICD loader does not read OCL_ICD_VENDORS")
    assert "found no platform" in status["reason"]


@needs_opencl
def test_devices_are_gpu_first():
    from mnn_opencl.runtime import TYPE_ORDER, discover

    order = [TYPE_ORDER[d.kind] for d in discover().devices]
    assert order == sorted(order)
    assert [d.index for d in discover().devices] == list(range(len(order)))


@needs_opencl
def test_select_by_index_and_name(monkeypatch):
    from mnn_opencl.runtime import discover, select_device

    devices = discover().devices
    assert select_device() is devices[0]
    for entry in devices:
        assert select_device(str(entry.index)) is entry
        assert (
            select_device(entry.device["name"][-6:].lower())
            .device["name"]
            .lower()
            .endswith(entry.device["name"][-6:].lower())
        )
    monkeypatch.setenv("MNN_OPENCL_DEVICE", str(len(devices) - 1))
    assert select_device() is devices[-1]
    with pytest.raises(mnn.BackendError, match=r"out of range; devices are 0: "):
        select_device(str(len(devices)))
    with pytest.raises(mnn.BackendError, match="no OpenCL device matches 'no-such-device'"):
        select_device("no-such-device")


@needs_opencl
def test_bad_device_env_makes_it_unavailable():
    status = _status(MNN_OPENCL_DEVICE="no-such-device")
    assert not status["available"] and "no OpenCL device matches" in status["reason"]


@needs_opencl
@pytest.mark.parametrize("how", ["option", "env"])
def test_session_runs_on_each_device(how, monkeypatch):
    from mnn_opencl.runtime import discover

    backend = opencl_backend()
    b = mnn.GraphBuilder()
    x = b.input("x", (3, 7))
    b.output(b.Tanh(b.Mul(x, b.const(np.full(7, 0.5, "float32")))), "y")
    graph = b.build()
    xv = np.linspace(-3, 3, 21, dtype="float32").reshape(3, 7)
    for entry in discover().devices:
        options = {}
        if how == "option":
            options = {"opencl.device": entry.index}
        else:
            monkeypatch.setenv("MNN_OPENCL_DEVICE", entry.device["name"])
        sess = mnn.Session(graph, backend="opencl", fallback=False, options=options)
        np.testing.assert_allclose(sess.run({"x": xv})["y"], np.tanh(xv * 0.5), rtol=1e-5, atol=1e-6)
        assert backend.segments[-1]["device"] == entry.label


@needs_opencl
def test_fp16_only_with_the_extension_and_low_precision():
    from mnn_opencl.runtime import select_device

    backend = opencl_backend()
    has_fp16 = select_device().has_fp16
    assert backend.compute_dtype(PrepareContext(precision="normal")) == "float32"
    assert backend.compute_dtype(PrepareContext(precision="low")) == ("float16" if has_fp16 else "float32")
    b = mnn.GraphBuilder()
    x = b.input("x", (1, 4, 6, 6))
    b.output(b.Conv(x, b.const(np.ones((4, 4, 3, 3), "float32") / 36), None, pads=[1, 1, 1, 1]), "y")
    sess = mnn.Session(b.build(), backend="opencl", precision="low", fallback=False)
    got = sess.run({"x": np.ones((1, 4, 6, 6), "float32")})["y"]
    assert backend.segments[-1]["precision"] == ("float16" if has_fp16 else "float32")
    np.testing.assert_allclose(got[0, 0, 1:5, 1:5], 1.0, rtol=1e-3 if has_fp16 else 1e-6)


@needs_opencl
def test_fp16_can_be_forced_and_refused(monkeypatch):
    backend = opencl_backend()
    monkeypatch.setenv("MNN_OPENCL_FP16", "force")
    assert backend.compute_dtype(PrepareContext(precision="low")) == "float16"
    assert backend.compute_dtype(PrepareContext(precision="high")) == "float32"
    monkeypatch.setenv("MNN_OPENCL_FP16", "0")
    assert backend.compute_dtype(PrepareContext(precision="low")) == "float32"


@needs_opencl
def test_pocl_has_no_fp16_so_fp32_is_chosen():
    from mnn_opencl.runtime import discover

    pocl = [d for d in discover().devices if "portable computing language" in d.platform["name"].lower()]
    if not pocl:
        pytest.skip("no PoCL device here")
    backend = opencl_backend()
    assert not pocl[0].has_fp16
    ctx = PrepareContext(precision="low", options={"opencl.device": pocl[0].index})
    assert backend.compute_dtype(ctx) == "float32"


@needs_opencl
def test_unknown_option_is_an_error():
    b = mnn.GraphBuilder()
    x = b.input("x", (2,))
    b.output(b.Relu(x), "y")
    with pytest.raises(mnn.MnnError, match=r"opencl: unknown option\(s\) opencl.devcie; the options are opencl.device"):
        mnn.Session(b.build(), backend="opencl", options={"opencl.devcie": 0})


def test_vendored_constants_match_the_khronos_headers():
    header = Path("/usr/include/CL/cl.h")
    if not header.exists():
        pytest.skip("no Khronos headers here (/usr/include/CL/cl.h)")
    from mnn_opencl import _cl

    text = header.read_text()
    for name, value in _cl.CONSTANTS.items():
        m = re.search(rf"#define {name}\s+(.+)", text)
        assert m, name
        assert eval(m.group(1).split("/*")[0].strip()) == value, name  # e.g. (1 << 2), 0x1166


FORK_SCRIPT = """
import os, numpy as np, mnn_core as mnn
b = mnn.GraphBuilder(); x = b.input("x", (4,)); b.output(b.Relu(x), "y"); g = b.build()
sess = mnn.Session(g, backend="opencl")  # OpenCL initialized in the parent
assert list(sess.run({"x": np.array([-1, 2, -3, 4], "float32")})["y"]) == [0, 2, 0, 4]
pid = os.fork()
if pid == 0:
    row = next(r for r in mnn.backends() if r.name == "opencl")
    try:
        sess.run({"x": np.ones(4, "float32")})
        ran = "ran"
    except mnn.MnnError as e:
        ran = str(e)
    print(row.available, "|", row.reason, "|", ran, flush=True)
    os._exit(0)
os.waitpid(pid, 0)
assert list(sess.run({"x": np.array([1, -2, 3, -4], "float32")})["y"]) == [1, 0, 3, 0]
"""


@needs_opencl
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_fails_fast_instead_of_hanging():
    out = subprocess.run([sys.executable, "-c", FORK_SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    available, reason, ran = out.stdout.strip().split(" | ")
    assert available == "False" and "forked after OpenCL was initialized" in reason
    assert "forked after OpenCL was initialized" in ran

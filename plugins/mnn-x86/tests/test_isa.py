"""ISA choice: cpuid by default, MNN_X86_ISA, the "x86.isa" option, and clear
errors for a level the CPU lacks or a name that is not a level."""

from __future__ import annotations

import mnn_x86
import numpy as np
import pytest
from mnn_x86 import isa

from mnn_core import GraphBuilder, Session
from mnn_core.errors import BackendError


def _graph():
    g = GraphBuilder()
    x = g.input("x", (1, 4, 6, 6))
    w = g.const(np.ones((2, 4, 3, 3), np.float32))
    g.output(g.Conv(x, w, pads=[1, 1, 1, 1]))
    return g.build()


def _lacking(monkeypatch) -> str:
    """A level this CPU lacks; pretend to be an AVX2-only CPU when it has them all."""
    missing = [level for level in isa.ISAS if level not in isa.supported()]
    if not missing:
        monkeypatch.setattr(isa, "supported", lambda: ("scalar", "avx2"))
        return "avx512"
    return missing[-1]


def test_default_is_the_widest_supported(monkeypatch):
    monkeypatch.delenv(isa.ENV_VAR, raising=False)
    assert isa.choose({}) == isa.supported()[-1]
    device = mnn_x86.X86Backend().devices()[0]
    assert device.name == f"x86 {isa.supported()[-1]} ({isa.max_threads()} threads max)"
    assert device.extra["isa"] == isa.supported()[-1]


def test_forced_isa_the_cpu_lacks_is_a_clear_error(monkeypatch):
    level = _lacking(monkeypatch)
    with pytest.raises(BackendError, match=f"asks for {level}, but this CPU lacks"):
        Session(_graph(), backend="x86", options={isa.OPTION: level})


def test_env_isa_the_cpu_lacks_makes_the_backend_unavailable(monkeypatch):
    level = _lacking(monkeypatch)
    monkeypatch.setenv(isa.ENV_VAR, level)
    avail = mnn_x86.X86Backend().availability()
    assert not avail and f"{isa.ENV_VAR}={level}" in avail.reason
    with pytest.raises(BackendError, match="not available here"):
        Session(_graph(), backend="x86")
    sess = Session(_graph(), backend="auto")  # auto just leaves x86 out
    assert "x86" not in {p.backend for p in sess.plan}


def test_unknown_isa_name(monkeypatch):
    with pytest.raises(BackendError, match="expected one of scalar, avx2, avx512"):
        Session(_graph(), backend="x86", options={isa.OPTION: "sse9"})
    monkeypatch.setenv(isa.ENV_VAR, "neon")
    assert "expected one of" in mnn_x86.X86Backend().availability().reason


def test_env_and_option(monkeypatch):
    monkeypatch.setenv(isa.ENV_VAR, "scalar")
    assert isa.choose({}) == "scalar"
    assert mnn_x86.X86Backend().devices()[0].extra["isa"] == "scalar"
    top = isa.supported()[-1]
    assert isa.choose({isa.OPTION: top}) == top  # the option wins over the environment
    x = np.random.default_rng(0).standard_normal((1, 4, 6, 6)).astype(np.float32)
    want = Session(_graph(), backend="reference").run({"x": x})["conv"]
    for level in isa.supported():
        got = Session(_graph(), backend="x86", fallback=False, options={isa.OPTION: level}).run({"x": x})["conv"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _cpuinfo(key: str) -> str:
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].strip() for line in f if line.startswith(key)), "")


def test_fma_probe_tells_split_from_full_width_units():
    """The probe behind the tile's choice: about 1.0 (two 512-bit FMA units) or 2.0 (a 512-bit FMA
    split in halves, or one unit), 0.0 without AVX-512. Zen 4 (AMD family 25) splits every one."""
    from mnn_x86 import _x86

    ratio = _x86.fma512_cost_ratio()
    if not _x86.cpu_supports("avx512"):
        assert ratio == 0.0
        return
    assert 0.7 < ratio < 2.8, ratio
    if _cpuinfo("vendor_id") == "AuthenticAMD" and _cpuinfo("cpu family") == "25":
        assert ratio > 1.5, ratio


def test_avx512_tile_by_fma_probe_and_env(monkeypatch):
    """14x32 where 512-bit FMAs cost what 256-bit ones do, 6x32 elsewhere (isa.py: TILES);
    MNN_X86_AVX512_TILE overrides; a bad value is a clear error. Packed weights carry the table's
    name, so sessions of both tiles coexist."""
    from mnn_x86 import _x86

    before = _x86.avx512_rows()
    try:
        monkeypatch.setenv(isa.TILE_ENV, "auto")
        isa.apply_tile_env()
        ratio = _x86.fma512_cost_ratio()
        if abs(ratio - 1.5) > 0.3:  # the probe is not on the fence: both measurements agree
            assert _x86.avx512_rows() == (14 if 0 < ratio < 1.5 else 6)
        x = np.random.default_rng(0).standard_normal((1, 4, 6, 6)).astype(np.float32)
        outs = []
        for tile, rows in (("6x32", 6), ("14x32", 14), ("8x48", 8)):
            monkeypatch.setenv(isa.TILE_ENV, tile)
            isa.apply_tile_env()
            assert _x86.avx512_rows() == rows
            if "avx512" in isa.supported():
                assert _x86.table_info("avx512")["mr"] == rows
            outs.append(Session(_graph(), backend="x86", fallback=False).run({"x": x}))
        for out in outs[1:]:
            np.testing.assert_allclose(outs[0][next(iter(outs[0]))], out[next(iter(out))], rtol=1e-5)
        monkeypatch.setenv(isa.TILE_ENV, "8x32")
        with pytest.raises(BackendError, match="MNN_X86_AVX512_TILE='8x32'; expected one of auto, 6x32, 14x32, 8x48"):
            isa.apply_tile_env()
        with pytest.raises(ValueError, match="6, 14 or 8 rows"):
            _x86.set_avx512_rows(7)
    finally:
        _x86.set_avx512_rows(before)

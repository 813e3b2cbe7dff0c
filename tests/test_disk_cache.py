"""The rules a GPU backend's cache files pass before a driver sees them (mnn_core.backend.kit.disk_cache)."""

from __future__ import annotations

import os

import pytest

from mnn_core.backend.kit import disk_cache as dc

KEY = bytes(range(32))


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("MNN_TESTBK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert dc.cache_dir("MNN_TESTBK", "testbk") == tmp_path / "mnn" / "testbk"
    monkeypatch.setenv("MNN_TESTBK_CACHE_DIR", str(tmp_path / "x"))
    assert dc.cache_dir("MNN_TESTBK", "testbk") == tmp_path / "x"
    monkeypatch.setenv("MNN_TESTBK_CACHE", "0")
    assert dc.cache_dir("MNN_TESTBK", "testbk") is None


def test_a_folder_others_may_write_is_not_used(tmp_path):
    root = tmp_path / "c"
    assert dc.private_dir("t", root) == root and (root.stat().st_mode & 0o777) == 0o700
    root.chmod(0o777)
    with pytest.warns(UserWarning, match="writable by group or others"):
        assert dc.private_dir("t", root) is None


def test_pack_round_trip_and_what_unpack_refuses(tmp_path):
    secret = dc.folder_secret("t", dc.private_dir("t", tmp_path / "c"))
    assert secret is not None and len(secret) == 32
    assert dc.folder_secret("t", tmp_path / "c") == secret  # read back, not made anew
    data = dc.pack(b"M1\n", KEY, secret, b"payload")
    assert dc.unpack(b"M1\n", data, KEY, secret) == b"payload"
    bad = {
        "truncated": (data[:20], KEY, secret),
        "other key": (data, bytes(32), secret),
        "other secret": (data, KEY, os.urandom(32)),
        "edited": (data[:-1] + b"X", KEY, secret),
        "other magic": (b"M2\n" + data[3:], KEY, secret),
    }
    for case, (d, k, s) in bad.items():
        with pytest.raises(dc.Unusable):
            dc.unpack(b"M1\n", d, k, s)
            pytest.fail(case)


def test_read_private_refuses_links_and_shared_files(tmp_path):
    good = tmp_path / "good"
    dc.write_private(good, b"abc")
    assert dc.read_private(good) == b"abc" and (good.stat().st_mode & 0o077) == 0
    assert dc.read_private(tmp_path / "none") is None
    link = tmp_path / "link"
    link.symlink_to(good)
    with pytest.raises(dc.Unusable, match="regular file"):
        dc.read_private(link)
    good.chmod(0o666)
    with pytest.raises(dc.Unusable, match="writable"):
        dc.read_private(good)
    good.chmod(0o600)
    with pytest.raises(dc.Unusable, match="more than"):
        dc.read_private(good, limit=2)

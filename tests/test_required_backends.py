"""MNN_REQUIRE_BACKENDS turns an unavailable backend into the end of the test run, not a suite of skips."""

from __future__ import annotations

import pytest

from mnn_core.testing import check_required
from mnn_core.testing.required import ENV, unavailable_reason


def test_a_required_backend_that_is_missing_ends_the_run(monkeypatch):
    monkeypatch.setenv(ENV, "reference, nosuch")
    with pytest.raises(pytest.exit.Exception, match=r"'nosuch' is required .* unavailable: it is not installed"):
        check_required("nosuch")
    check_required("reference")  # required and available: nothing happens


def test_a_backend_not_required_may_be_missing(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    check_required("nosuch")
    assert unavailable_reason("reference") == ""


@pytest.mark.parametrize("value", ["x86,arm", "x86 arm", " x86 ,  arm "])
def test_the_list_takes_commas_or_spaces(monkeypatch, value):
    # spaces: the arm suite runs under qemu, whose -E would split a comma-separated value
    from mnn_core.testing.required import required

    monkeypatch.setenv(ENV, value)
    assert required() == {"x86", "arm"}

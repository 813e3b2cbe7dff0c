"""Session(options=): a "<backend>.<key>" that its installed backend does not declare is an error
naming the keys it takes; a key that names no installed backend is read by nothing, and warned of."""

import numpy as np
import pytest

import mnn_core as mnn
from mnn_core.backend import Backend
from mnn_core.runtime.session_args import check_options


def _relu():
    b = mnn.GraphBuilder()
    b.output(b.Relu(b.input("x", (2, 3))), "y")
    return b.build()


class _Declares(Backend):
    name = "declares"
    options = ("declares.tiles", "declares.device")


class _Silent(Backend):
    name = "silent"  # a backend from before Backend.options: its keys are not checked


def test_a_misspelled_key_names_the_keys_the_backend_takes():
    backends = {"declares": _Declares(), "silent": _Silent()}
    with pytest.raises(
        mnn.MnnError,
        match=r"declares: unknown option\(s\) declares.tile, declares.zz; "
        r"the options are declares.tiles, declares.device",
    ):
        check_options({"declares.tile": 1, "declares.zz": 2, "declares.device": 0}, backends)
    check_options({"declares.tiles": 1, "silent.anything": 2}, backends)


def test_a_session_refuses_an_undeclared_key_before_planning():
    with pytest.raises(mnn.MnnError, match=r"reference: unknown option\(s\) reference.fast; it takes none"):
        mnn.Session(_relu(), backend="reference", options={"reference.fast": True})


@pytest.mark.parametrize("key", ["nosuchbackend.tiles", "tiles"])
def test_a_key_no_installed_backend_reads_is_warned_of_and_the_session_runs(key):
    with pytest.warns(UserWarning, match=rf"Session option '{key}' names no installed backend.*installed: .*reference"):
        sess = mnn.Session(_relu(), backend="reference", options={key: 1})
    x = np.array([[-1, 0, 2], [3, -4, 5]], np.float32)
    np.testing.assert_array_equal(sess.run({"x": x})["y"], np.maximum(x, 0))


def test_every_installed_backend_declares_keys_under_its_own_name():
    from mnn_core.backend.plugins import get_plugins

    for name, backend in get_plugins().backends.items():
        for key in getattr(backend, "options", None) or ():
            assert key.startswith(f"{name}."), (name, key)

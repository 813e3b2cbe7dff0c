"""A corpus model (mnn_core.zoo) from the local corpus cache run on one backend with fallback=False
against ONNX Runtime, for the backends' end-to-end tests: `run_cached(name, backend)` returns why it
could not run (not cached, a damaged download, no onnxruntime) or None when every output matched;
a mismatch, or a plan that placed an op elsewhere, raises AssertionError."""

from __future__ import annotations

import numpy as np


def run_cached(name: str, backend: str, rtol: float = 1e-3, atol: float = 1e-4) -> str | None:
    from ..runtime.session import Session
    from ..zoo import MODELS, FetchError, cache_dir
    from ..zoo.fetch import fetch

    try:
        import onnxruntime as ort
    except ImportError:
        return "onnxruntime is not installed"
    model = next(m for m in MODELS if m.name == name)
    path = cache_dir() / "models" / model.name / model.member.rsplit("/", 1)[-1]
    if not path.exists():
        return f"{name} is not in the corpus cache ({cache_dir()}): python -m mnn_core.zoo fetch"
    try:
        path = fetch(model, cache_dir())[0]  # checks its sha256
    except FetchError as e:
        return str(e)
    from .. import load

    feeds = model.make_feeds()
    sess = Session(load(path), backend=backend, fallback=False)
    got = sess.run(feeds)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    for out, w in zip(sess.output_names, want):
        np.testing.assert_allclose(got[out], w, rtol=rtol, atol=atol, err_msg=f"{name} on {backend}: {out}")
    placed = [p for s in sess.pieces for p in s.plan] if sess.eager else list(sess.plan)
    assert {p.backend for p in placed} == {backend}, f"{name}: ops placed off {backend}"
    return None

"""Check an architecture's export on an mnn backend: run it with ONNX Runtime and with an mnn Session
(fallback on) on the same inputs, compare every output (relative L2 below 1e-4, as
mnn_core.zoo.check), list the ops the plan put on another backend (the reference kernels, for
x86: the kernels x86 lacks), and say whether a session with fallback=False can be made at all.

Statuses: ok; mismatch; export-failed; ort-fails (ONNX Runtime cannot run the file: not held against
mnn); load-failed (mnn.load raised); run-failed (Session, resize or run raised).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np

from mnn_core.zoo.check import compare, reason, rel_l2, run_onnxruntime

from . import Arch
from .export import ExportError, export_info, onnx_file

ACCEPTED = ("ok", "ort-fails")


@dataclass
class ArchResult:
    model: str
    exporter: str  # or "corpus"
    status: str
    detail: str = ""
    error: float | None = None  # the largest relative L2 error over the float outputs
    elsewhere: dict[str, int] = field(default_factory=dict)  # op -> nodes placed off the backend
    reasons: dict[str, str] = field(default_factory=dict)  # op -> the scheduler's reason, first node's
    strict: str = ""  # "yes", or why fallback=False fails
    dynamic_batch: bool | None = None
    seconds: float = 0.0  # mnn's load, plan and run

    @property
    def failed(self) -> bool:
        return self.status not in ACCEPTED

    def to_dict(self) -> dict:
        return asdict(self)


def check_arch(
    arch: Arch, exporter: str, backend: str = "x86", batch: int = 2, cache=None, small: bool = False, threads: int = 1
) -> ArchResult:
    """One model by one exporter on `backend`; never raises for what the model does."""
    try:
        path = onnx_file(arch, exporter, batch, cache, small)
    except ExportError as e:
        return ArchResult(arch.name, exporter, "export-failed", str(e))
    res = check_file(arch.name, exporter, path, arch.make_feeds(batch, small), backend, threads)
    res.dynamic_batch = export_info(arch, exporter, cache, small).get("dynamic_batch")
    return res


def check_file(name: str, source: str, path, feeds: dict, backend: str = "x86", threads: int = 1) -> ArchResult:
    """Any ONNX file (a corpus model's too, `source` "corpus") on `backend` against ONNX Runtime."""
    import mnn_core as mnn

    res = ArchResult(name, source, "ok")
    try:
        want = run_onnxruntime(path, feeds)
    except Exception as e:  # noqa: BLE001 - whatever ORT raises, the file is out of the acceptance set
        res.status, res.detail = "ort-fails", reason(e)
        return res
    shapes = {k: v.shape for k, v in feeds.items()}
    t0 = time.perf_counter()
    try:
        graph = mnn.load(path)
    except Exception as e:  # noqa: BLE001
        res.status, res.detail = "load-failed", reason(e, path)
        return res
    try:
        sess = mnn.Session(graph, backend=backend, threads=threads, fallback=True)
        if sess.eager:  # control flow or sequences: every op on the reference kernels, node by node
            res.elsewhere = {"(eager graph)": len(sess.graph.nodes)}
            res.reasons["(eager graph)"] = "the graph has control flow, sequences or data-dependent shapes"
        else:
            sess.resize(shapes, {k: feeds[k] for k in sess.value_inputs})
            off = [p for p in sess.plan if p.backend != backend]
            res.elsewhere = dict(Counter(p.op for p in off).most_common())
            for p in off:
                res.reasons.setdefault(p.op, p.reason)
        got = sess.run(feeds)
    except Exception as e:  # noqa: BLE001
        res.status, res.detail = "run-failed", reason(e, path)
        return res
    finally:
        res.seconds = time.perf_counter() - t0
    problems, errors = [], []
    for out, ref in want.items():
        if out not in got:
            problems.append(f"{out}: missing from mnn's outputs")
            continue
        problems.append(compare(out, got[out], ref))
        if ref.dtype.kind == "f" and np.shape(got[out]) == ref.shape:
            errors.append(rel_l2(got[out], ref))
    res.error = max(errors) if errors else None
    problems = [p for p in problems if p]
    if problems:
        res.status, res.detail = "mismatch", "; ".join(problems)
    res.strict = _strict(graph, backend, shapes, threads, {k: feeds[k] for k in sess.value_inputs})
    return res


def _strict(graph, backend: str, shapes: dict, threads: int, values: dict) -> str:
    import mnn_core as mnn

    try:
        sess = mnn.Session(graph, backend=backend, threads=threads, fallback=False)
        if not sess.eager:
            sess.resize(shapes, values)
        return "yes"
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        return "no: " + reason(e)[:200]

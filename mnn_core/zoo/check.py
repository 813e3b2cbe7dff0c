"""Check a model: run it with ONNX Runtime (CPUExecutionProvider) and with an mnn Session on the same
inputs, and compare every output. Float outputs must agree to a relative L2 error below 1e-4
(||got - want|| / max(||want||, tiny)); integer and bool outputs exactly.

Statuses: ok; mismatch (the first output that differs, and by how much); load-failed (mnn.load
raised); run-failed (Session or run raised); ort-fails (ONNX Runtime itself cannot run the model:
reported, and not held against mnn); fetch-failed.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..errors import MnnError
from .corpus import Model

RTOL = 1e-4
ACCEPTED = ("ok", "ort-fails")


@dataclass
class Result:
    name: str
    status: str
    detail: str = ""
    seconds: float = 0.0  # mnn's load, plan and run
    ort_seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status not in ACCEPTED

    def to_dict(self) -> dict:
        return asdict(self)


def reason(e: BaseException, path: Path | None = None) -> str:
    """One line: the exception's first line, and the importer's per-node lines after it ("  - ...")
    joined with " | ", each cut at 300 characters (they name the node, the op and the shapes). An
    exception mnn did not raise on purpose (a bug, not a refusal) also says where in mnn it came from."""
    lines = str(e).strip().splitlines() or [""]
    head = lines[0].replace(f"{path}: ", "") if path else lines[0]
    items = [ln.strip()[2:][:300] for ln in lines[1:] if ln.strip().startswith("- ")]
    if not isinstance(e, MnnError):
        frames = [f for f in traceback.extract_tb(e.__traceback__) if "mnn_core" in f.filename]
        if frames:
            f = frames[-1]
            head += f" (at {f.filename[f.filename.rindex('mnn_core') :]}:{f.lineno} in {f.name})"
    return " | ".join([f"{type(e).__name__}: {head}", *items])


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)  # NaN where ORT has NaN is agreement
    diff = np.where(both_nan, 0.0, got - want)
    return float(np.linalg.norm(diff) / max(np.linalg.norm(np.where(both_nan, 0.0, want)), 1e-30))


def compare(name: str, got: np.ndarray, want: np.ndarray) -> str:
    """'' when the output agrees, else why not (one line)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, onnxruntime {want.shape}"
    if want.dtype.kind == "f":
        if got.dtype.kind != "f":
            return f"{name}: dtype {got.dtype}, onnxruntime {want.dtype}"
        err = rel_l2(got, want)
        return "" if err < RTOL else f"{name}: relative L2 error {err:.3g} (limit {RTOL:g})"
    if want.dtype.kind == "O":  # sequences or maps: not compared
        return ""
    bad = int(np.count_nonzero(got != want))
    return "" if bad == 0 else f"{name}: {bad} of {want.size} {want.dtype} elements differ"


def run_onnxruntime(path: Path, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3  # its warnings about unused initializers are not ours to show
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def check_model(model: Model, path: Path, backend: str = "reference", threads: int = 1, static: bool = False) -> Result:
    """Run one model both ways; never raises for what the model does (a Result says it). With
    `static`, mnn imports the model with its inputs pinned to the shapes fed (input_shapes=), which
    tells a failure of dynamic-shape handling from one that remains with every shape known."""
    import mnn_core as mnn

    feeds = model.make_feeds()
    t0 = time.perf_counter()
    try:
        want = run_onnxruntime(path, feeds)
    except Exception as e:  # noqa: BLE001 - whatever ORT raises, the model is out of the acceptance set
        return Result(model.name, "ort-fails", reason(e))
    ort_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()

    def result(status: str, detail: str = "") -> Result:
        return Result(model.name, status, detail, time.perf_counter() - t0, ort_seconds)

    try:
        graph = mnn.load(path, **({"input_shapes": {k: v.shape for k, v in feeds.items()}} if static else {}))
    except Exception as e:  # noqa: BLE001 - one failing model must not stop the others
        return result("load-failed", reason(e, path))
    try:
        got = mnn.Session(graph, backend=backend, threads=threads).run(feeds)
    except Exception as e:  # noqa: BLE001
        return result("run-failed", reason(e, path))
    problems = []
    for name, ref in want.items():
        if name not in got:
            problems.append(f"{name}: missing from mnn's outputs")
        elif why := compare(name, got[name], ref):
            problems.append(why)
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return result("mismatch", problems[0] + more)
    return result("ok")


def table(results: list[Result]) -> str:
    width = max([len(r.name) for r in results] + [5])
    lines = [f"{'model':{width}}  {'status':12} {'mnn s':>7} {'ort s':>6}  detail"]
    for r in results:
        lines.append(f"{r.name:{width}}  {r.status:12} {r.seconds:7.2f} {r.ort_seconds:6.2f}  {r.detail}")
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    lines.append(", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(lines)


def markdown(models: list[Model], results: list[Result], backend: str) -> str:
    """The docs' table (docs/ZOO.md): a model per row with its wheel, inputs and status here."""
    by_name = {r.name: r for r in results}
    rows = [
        f"| model | wheel (pinned) | wheel MB | .onnx MB | family | exercises | inputs fed | {backend} | reason |",
        "|---" * 9 + "|",
    ]
    for m in models:
        r = by_name[m.name]
        feeds = ", ".join(f"{k} {f.dtype}{list(f.shape)}" for k, f in m.feeds.items())
        detail = r.detail if len(r.detail) <= 220 else r.detail[:217] + "..."
        sizes = [f"{m.wheel_mb:.1f}", f"{m.size / 1e6:.1f}"] if m.package else ["-", "-"]
        cells = [m.name, m.source, *sizes, m.family, m.ops, feeds, r.status, detail]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)

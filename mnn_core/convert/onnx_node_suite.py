"""ONNX node conformance: run onnx's own node test cases on mnn backends, write a report.

    python -m mnn_core.conformance --backend reference --backend x86 --output docs/CONFORMANCE.md

Cases come from the installed onnx package (`onnx.backend.test.loader.load_model_tests(kind="node")`,
built in memory: onnx wheels no longer ship the data files), or from a data folder
(`--data-dir`, the layout `onnx.backend.test.cmd_tools generate-data` writes).

Each case runs in a worker process (a pool of --jobs) through mnn's ONNX backend
(`mnn_core.convert.onnx_backend`) with fallback off, so the backend named is the backend
measured. A case that crashes its worker or runs past --timeout is a failure and
the worker is replaced: no case can stop the run. Outcomes:

- passed: every output has ONNX's expected shape, dtype and values (the case's rtol/atol);
- unsupported: the importer or the backend declines the model (an op, dtype or
  dynamic input mnn does not take), before running anything;
- failed: anything else (wrong values, an error while running, a crash, a timeout).

The report has one row and one section per backend, each saying when, on which device and by
which command it was measured. Writing to an existing report (--output) replaces the rows and
sections of the backends measured now and keeps every other backend's, so backends measured on
different machines (the GPU ones on the lent H200, the CPU ones here) share one report;
--replace writes only this run's backends.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import time
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

import numpy as np

from ..graph.ir import LOW_PRECISION_DTYPES
from .onnx_node_report import device_description, parse_report, render, summarize

MEMORY_LIMIT = 4 << 30  # per worker, so a runaway allocation fails one case, not the machine


@dataclass
class Case:
    name: str
    op: str
    model: bytes
    data_sets: list
    rtol: float
    atol: float


@dataclass
class Result:
    case: str
    op: str
    status: str  # passed | failed | unsupported
    detail: str = ""
    seconds: float = 0.0
    reasons: list = field(default_factory=list)  # unsupported: the op types the importer/backend named


# -- cases ---------------------------------------------------------------------------------------


def load_cases(pattern: str | None = None, data_dir: str | None = None) -> list[Case]:
    """Every onnx node test case (optionally only names matching `pattern`)."""
    import onnx
    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if data_dir:
            tests = _load_dir(Path(data_dir))
        else:
            tests = [(t.name, t.model, t.data_sets, t.rtol, t.atol) for t in load_model_tests(kind="node")]
    regex = re.compile(pattern) if pattern else None
    ops = _case_ops([(name, model) for name, model, *_ in tests])
    cases = []
    for name, model, data_sets, rtol, atol in tests:
        if regex and not regex.search(name):
            continue
        data = [([_as_value(x) for x in ins], [_as_value(x) for x in outs]) for ins, outs in data_sets]
        proto = model if isinstance(model, onnx.ModelProto) else onnx.load(model)
        cases.append(Case(name, ops[name], proto.SerializeToString(), data, rtol, atol))
    return cases


def _load_dir(root: Path) -> list:
    import onnx
    from onnx import numpy_helper

    node_dir = root / "node" if (root / "node").is_dir() else root
    tests = []
    for case_dir in sorted(p for p in node_dir.iterdir() if (p / "model.onnx").is_file()):
        model = onnx.load(str(case_dir / "model.onnx"))
        data_sets = []
        for ds in sorted(case_dir.glob("test_data_set_*")):
            ins = [numpy_helper.to_array(_read_tensor(p)) for p in sorted(ds.glob("input_*.pb"), key=_index)]
            outs = [numpy_helper.to_array(_read_tensor(p)) for p in sorted(ds.glob("output_*.pb"), key=_index)]
            data_sets.append((ins, outs))
        tests.append((case_dir.name, model, data_sets, 1e-3, 1e-7))
    return tests


def _index(path: Path) -> int:
    return int(path.stem.split("_")[-1])


def _read_tensor(path: Path):
    import onnx

    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t


def _as_value(x):
    """Case data as numpy (TensorProto items are converted; sequences stay lists)."""
    import onnx
    from onnx import numpy_helper

    if isinstance(x, onnx.TensorProto):
        return numpy_helper.to_array(x)
    return x


def _case_ops(tests) -> dict[str, str]:
    """The op a case tests: the one non-Constant op of its model, or its unexpanded sibling's."""
    own = {}
    for name, model in tests:
        types = [n.op_type for n in model.graph.node if n.op_type != "Constant"] or ["Constant"]
        own[name] = types[0] if len(set(types)) == 1 else Counter(types).most_common(1)[0][0]
    out = {}
    for name in own:
        base = re.sub(r"_expanded(_ver\d+)?$", "", name)
        out[name] = own.get(base, own[name]) if base != name else own[name]
    return out


# -- one case (in a worker) ---------------------------------------------------------------------------


def run_case(case: Case, backend: str) -> Result:
    import onnx

    from ..errors import UnsupportedOpError
    from .onnx_backend import MnnBackend
    from .onnx_common import OnnxImportError

    start = time.perf_counter()

    def result(status, detail="", reasons=()):
        return Result(case.name, case.op, status, detail, time.perf_counter() - start, sorted(set(reasons)))

    model = onnx.load_from_string(case.model)
    try:
        rep = MnnBackend.prepare(model, device=f"CPU:{backend}", fallback=False)
    except OnnxImportError as exc:
        return result("unsupported", _first_line(exc.unsupported[0]), [u.op for u in exc.unsupported])
    except UnsupportedOpError as exc:
        return result("unsupported", _first_line(exc), [_declined_op(exc)])
    except Exception as exc:  # noqa: BLE001  any failure of preparing is this case's failure
        return result("failed", f"prepare: {type(exc).__name__}: {_first_line(exc)}")
    try:
        for inputs, expected in case.data_sets:
            got = rep.run(list(inputs))
            problem = compare(expected, got, case.rtol, case.atol)
            if problem:
                return result("failed", problem)
    except OnnxImportError as exc:  # a run-time specialization that mnn cannot import
        return result("unsupported", _first_line(exc.unsupported[0]), [u.op for u in exc.unsupported])
    except UnsupportedOpError as exc:
        return result("unsupported", _first_line(exc), [_declined_op(exc)])
    except Exception as exc:  # noqa: BLE001
        return result("failed", f"run: {type(exc).__name__}: {_first_line(exc)}")
    return result("passed")


def compare(expected: list, got: list, rtol: float, atol: float) -> str:
    """'' when outputs match as onnx's backend test runner requires, else what differs."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (want, have) in enumerate(zip(expected, got)):
        problem = _compare_value(f"output {i}", want, have, rtol, atol)
        if problem:
            return problem
    return ""


def _compare_value(where: str, want, have, rtol: float, atol: float) -> str:
    """Tensors by shape, dtype and values; sequences element by element; an empty optional is None."""
    if want is None or have is None:
        return (
            ""
            if want is None and have is None
            else f"{where}: {'empty' if have is None else 'a value'}, expected {'empty' if want is None else 'a value'}"
        )
    if isinstance(want, (list, tuple)):
        if not isinstance(have, (list, tuple)):
            return f"{where}: a {type(have).__name__}, expected a sequence"
        if len(want) != len(have):
            return f"{where}: a sequence of {len(have)}, expected {len(want)}"
        for k, (w, h) in enumerate(zip(want, have)):
            problem = _compare_value(f"{where}[{k}]", w, h, rtol, atol)
            if problem:
                return problem
        return ""
    if isinstance(have, (list, tuple)):
        return f"{where}: a sequence, expected a tensor"
    want, have = np.asarray(want), np.asarray(have)
    if want.shape != have.shape:
        return f"{where}: shape {have.shape}, expected {want.shape}"
    if want.dtype != have.dtype:
        return f"{where}: dtype {have.dtype}, expected {want.dtype}"
    if want.dtype.name in LOW_PRECISION_DTYPES:  # ml_dtypes: compare their float32 values
        want, have = want.astype(np.float32), have.astype(np.float32)
    if want.dtype == object:
        same = np.array_equal(want, have)
    else:
        try:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol)
            same = True
        except AssertionError:
            same = False
    if not same:
        return f"{where}: values differ (max abs diff {_max_diff(want, have)})"
    return ""


def _max_diff(want, have) -> str:
    try:
        d = np.abs(want.astype(np.float64) - have.astype(np.float64))
        return f"{np.nanmax(d):.3g}" if d.size else "n/a"
    except Exception:  # noqa: BLE001
        return "n/a"


def _first_line(exc) -> str:
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


def _declined_op(exc) -> str:
    m = re.match(r"op (\S+)", str(exc))
    return m.group(1) if m else "?"


# -- the worker pool ---------------------------------------------------------------------------------

_CASES: list[Case] = []  # set before the workers fork; they read cases by index


def _worker(conn, backend: str) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    while True:
        try:
            index = conn.recv()
        except EOFError:
            return
        if index is None:
            return
        try:
            res = run_case(_CASES[index], backend)
        except BaseException as exc:  # noqa: BLE001  keep the worker alive for the next case
            case = _CASES[index]
            res = Result(case.name, case.op, "failed", f"{type(exc).__name__}: {_first_line(exc)}")
        conn.send(res)


class _Worker:
    def __init__(self, ctx, backend: str):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, backend), daemon=True)
        self.proc.start()
        child.close()
        self.task: int | None = None
        self.started = 0.0

    def give(self, index: int) -> None:
        self.task, self.started = index, time.monotonic()
        self.conn.send(index)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.proc.join(5)
        self.conn.close()


def run_all(cases: list[Case], backend: str, jobs: int, timeout: float, progress=None) -> list[Result]:
    """Run every case on `backend` in `jobs` worker processes, each case limited to `timeout` s."""
    global _CASES
    _CASES = cases
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    workers = [_Worker(ctx, backend) for _ in range(max(1, min(jobs, len(cases))))]
    pending = list(range(len(cases)))[::-1]
    results: dict[int, Result] = {}
    reported = [0]

    def replace(w, status_detail):
        index = w.task
        results[index] = Result(
            cases[index].name, cases[index].op, "failed", status_detail, time.monotonic() - w.started
        )
        w.stop(kill=True)
        workers[workers.index(w)] = _Worker(ctx, backend)

    while len(results) < len(cases):
        for w in workers:
            if w.task is None and pending:
                w.give(pending.pop())
        busy = [w for w in workers if w.task is not None]
        ready = wait([w.conn for w in busy], timeout=1.0)
        for w in busy:
            if w.conn in ready:
                try:
                    res = w.conn.recv()
                except (EOFError, OSError):
                    code = w.proc.exitcode
                    replace(w, f"crashed: the worker died (exit code {code})")
                    continue
                results[w.task] = res
                w.task = None
            elif time.monotonic() - w.started > timeout:
                replace(w, f"timeout: still running after {timeout:g} s")
        if progress and len(results) // 200 > reported[0]:
            reported[0] = len(results) // 200
            progress(len(results), len(cases))
    for w in workers:
        w.stop()
    return [results[i] for i in range(len(cases))]


# -- command line ---------------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mnn_core.conformance",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--backend", action="append", help="mnn backend to measure (repeat; default reference)")
    p.add_argument("--output", metavar="FILE.md", help="write the markdown report here")
    p.add_argument("--json", metavar="FILE.json", help="write every case's outcome here")
    p.add_argument("--filter", metavar="REGEX", help="only cases whose name matches")
    p.add_argument("--data-dir", metavar="DIR", help="read cases from generated data instead of memory")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="worker processes (default: cores)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per case (default 30)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="write only this run's backends (default: keep the other backends of an existing --output)",
    )
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    backends = args.backend or ["reference"]
    from ..backend.plugins import get_plugins

    known = get_plugins().backends
    start = time.time()
    import onnx

    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    cases = load_cases(args.filter, args.data_dir)
    log(f"loaded {len(cases)} cases in {time.time() - start:.1f} s")
    runs = {}
    for backend in backends:
        if backend not in known:
            log(f"backend {backend!r} is not installed; installed: {', '.join(sorted(known))}")
            runs[backend] = [Result(c.name, c.op, "unsupported", f"backend {backend} is not installed") for c in cases]
            continue
        t0 = time.time()
        runs[backend] = run_all(
            cases, backend, args.jobs, args.timeout, progress=lambda done, total: log(f"  {backend}: {done}/{total}")
        )
        s = summarize(runs[backend])
        log(
            f"{backend}: {s['passed']} passed, {s['failed']} failed, {s['unsupported']} unsupported "
            f"of {s['total']} in {time.time() - t0:.0f} s"
        )
    cmd = "python -m mnn_core.conformance " + " ".join(f"--backend {b}" for b in backends)
    if args.output:
        cmd += f" --output {args.output}"
    meta = {
        "command": cmd,
        "date": time.strftime("%Y-%m-%d"),
        "seconds": time.time() - start,
        "jobs": args.jobs,
        "timeout": args.timeout,
        "onnx": onnx.__version__,
        "numpy": np.__version__,
        "cases": len(cases),
        "where": {b: device_description(known.get(b)) for b in backends},
    }
    keep = None
    if args.output and not args.replace and Path(args.output).is_file():
        keep = parse_report(Path(args.output).read_text())
        if keep:
            log(f"keeping {', '.join(b for b in keep if b not in runs) or 'no other backends'} from {args.output}")
    report = render(runs, meta, keep)
    if args.output:
        Path(args.output).write_text(report)
        log(f"wrote {args.output}")
    else:
        print(report)
    if args.json:
        Path(args.json).write_text(
            json.dumps({b: [asdict(r) for r in rs] for b, rs in runs.items()} | {"_meta": meta}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

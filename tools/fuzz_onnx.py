"""Fuzz mnn's ONNX importer: a mutated model loads (and runs) or fails with an MnnError.

    python tools/fuzz_onnx.py --count 20000 [--jobs 2] [--seed 1] [--backend reference] [--out DIR]

Seeds are real small models: a conv net and an LSTM exported by torch.onnx, a model with
If/Loop bodies (their own initializers and Constant nodes), one with sparse initializers and
external data (top level, Constant node, If body), and an int8 QDQ model. A mutant is a seed
with structured damage (hostile dims, types, attributes, op types, graph input shapes, sparse
indices, external references such as '../x', '/etc/passwd', a symlink out of the folder, a
FIFO, /dev/zero, bad offsets) and/or byte-level damage to the serialized protobuf (flips,
overwrites, truncation, insertions).

Mutants run in batches in child processes, each under RLIMIT_AS (its address space after
start-up + 4x the largest model with its external data + 512 MiB): mnn_core.load(path), then
for those that load, one Session(...).run on a small input. A finding is a crash (signal or
exit), a hang (no progress for --timeout seconds), an exception that is not an MnnError, or a
loaded model holding bytes of a file outside its folder. Findings are kept under --out with
the mutant and the traceback; the exit status is 1 when there is any.

A Loop mutated to a huge trip count is a valid model that runs for a long time: a timeout in
`run` of a graph with a Loop is counted apart ("loop_timeouts"), not as a hang.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ is not a package
from onnx_mutants import build_seeds, make_folder, mutate  # noqa: E402

BATCH = 60


# -- the child ---------------------------------------------------------------------------------


def _inputs(graph):
    """Small inputs for a loaded graph, or None when it cannot be fed one (too big, not tensors)."""
    import numpy as np

    from mnn_core.graph.ir import TensorInfo

    rng = np.random.default_rng(0)
    feeds = {}
    for name, info in graph.inputs.items():
        if not isinstance(info, TensorInfo) or info.shape is None:
            return None
        shape = tuple(d if isinstance(d, int) else 2 for d in info.shape)
        if any(d < 0 or d > 4096 for d in shape) or int(np.prod(shape, dtype=np.float64)) > 1 << 20:
            return None
        kind = np.dtype(info.dtype).kind if info.dtype not in ("bfloat16",) else "f"
        if kind == "f":
            feeds[name] = rng.standard_normal(shape).astype(info.dtype)
        elif kind in "iu":
            feeds[name] = rng.integers(0, 3, shape).astype(info.dtype)
        elif kind == "b":
            feeds[name] = rng.integers(0, 2, shape).astype(bool)
        else:
            return None
    return feeds


def _leaks(arrays) -> bool:
    import numpy as np

    for a in arrays:
        a = np.asarray(a)
        if a.dtype != object and (b"SECRET" in a.tobytes() or b"root:" in a.tobytes()):
            return True
    return False


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def child(job_file: str) -> None:
    """Run a batch: one line per step on stdout ("S index phase", "R index {json}")."""
    import faulthandler
    import resource
    import traceback
    import warnings

    import mnn_core
    from mnn_core.errors import MnnError

    faulthandler.enable()
    warnings.simplefilter("ignore")
    job = json.loads(Path(job_file).read_text())
    backend = job["backend"]
    warm = mnn_core.load(job["warmup"])  # the lazy imports happen before the limit
    mnn_core.Session(warm, backend=backend).run(_inputs(warm))
    limit = _vm_bytes() + 4 * job["max_bytes"] + (512 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for index, path in job["files"]:
        result: dict = {}
        phase = "load"
        try:
            say(f"S {index} load")
            graph = mnn_core.load(path)
            result["loaded"] = True
            if _leaks(graph.initializers.values()):
                result["leak"] = "an initializer holds bytes of a file outside the model's folder"
            feeds = _inputs(graph)
            if feeds is not None:
                loops = any(n.op in ("Loop", "Scan") for n in graph.nodes)
                phase = "session"
                say(f"S {index} session")
                sess = mnn_core.Session(graph, backend=backend)
                phase = "run"
                say(f"S {index} run{'-loop' if loops else ''}")
                out = sess.run(feeds)
                result["ran"] = True
                if _leaks(out.values()):
                    result["leak"] = "an output holds bytes of a file outside the model's folder"
        except MnnError as exc:
            result.update(error=type(exc).__name__, phase=phase, message=str(exc)[:300])
        except BaseException as exc:  # noqa: BLE001  the finding this fuzzer looks for
            result.update(
                other=type(exc).__name__, phase=phase, message=str(exc)[:300], traceback=traceback.format_exc()[-4000:]
            )
        say(f"R {index} {json.dumps(result)}")


# -- the parent ----------------------------------------------------------------------------------


class Fuzzer:
    def __init__(self, out: Path, seed: int, backend: str, timeout: float, log=print):
        import onnx

        self.out, self.seed, self.backend, self.timeout, self.log = out, seed, backend, timeout, log
        self.seed_dir = out / "seeds"
        self.seed_dir.mkdir(parents=True, exist_ok=True)
        self.seeds = build_seeds(self.seed_dir)
        self.names = sorted(self.seeds)
        self.data = (self.seed_dir / "data.bin").read_bytes()
        self.op_types = sorted({s.name for s in onnx.defs.get_all_schemas()})
        self.counts: collections.Counter = collections.Counter()
        self.errors: collections.Counter = collections.Counter()
        self.findings: list[dict] = []

    def mutant(self, index: int) -> tuple[str, bytes]:
        rng = random.Random(self.seed * 1_000_003 + index)
        name = self.names[index % len(self.names)]
        return name, mutate(rng, self.seeds[name], self.op_types)

    def run(self, count: int, jobs: int) -> dict:
        start = time.perf_counter()
        batches = [list(range(i, min(i + BATCH, count))) for i in range(0, count, BATCH)]
        folders = [self.out / f"w{j}" for j in range(jobs)]
        for folder in folders:
            make_folder(folder, self.data)
        free = list(folders)
        import threading

        lock = threading.Lock()

        def work(batch):
            with lock:
                folder = free.pop()
            try:
                self._batch(folder, batch, lock)
            finally:
                with lock:
                    free.append(folder)

        with ThreadPoolExecutor(jobs) as pool:
            for _ in pool.map(work, batches):
                pass
        return {
            "mutants": count,
            "seconds": round(time.perf_counter() - start, 1),
            **dict(sorted(self.counts.items())),
            "errors": dict(self.errors.most_common()),
            "findings": len(self.findings),
        }

    def _batch(self, folder: Path, batch: list[int], lock) -> None:
        files, sizes = [], {}
        for index in batch:
            name, data = self.mutant(index)
            path = folder / f"m{index}.onnx"
            path.write_bytes(data)
            files.append((index, str(path)))
            sizes[index] = (name, len(data))
        pending = list(files)
        max_bytes = max(n for _, n in sizes.values()) + len(self.data)
        while pending:
            done = self._child(folder, pending, max_bytes, sizes, lock)
            pending = pending[done:]
        for _, path in files:
            os.unlink(path)

    def _child(self, folder, files, max_bytes, sizes, lock) -> int:
        """Run files in one child until it finishes, crashes or hangs; returns how many it got through."""
        job = folder / "job.json"
        job.write_text(
            json.dumps(
                {
                    "files": files,
                    "backend": self.backend,
                    "max_bytes": max_bytes,
                    "warmup": str(self.seed_dir / "convnet.onnx"),
                }
            )
        )
        env = dict(os.environ, OMP_NUM_THREADS="1", MALLOC_ARENA_MAX="2", PYTHONWARNINGS="ignore")
        with open(folder / "stderr.txt", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", str(job)], stdout=subprocess.PIPE, stderr=err, env=env
            )
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        current, phase, finished, buf = None, "start", 0, b""
        deadline = time.monotonic() + self.timeout + 30  # (start-up and warm-up first)
        while True:
            ready = sel.select(max(0.0, deadline - time.monotonic()))
            if not ready:
                proc.kill()
                proc.wait()
                kind = "loop_timeouts" if phase == "run-loop" else "hang"
                self._finding(kind, current, phase, sizes, folder, f"no progress for {self.timeout} s", lock)
                break
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                rc = proc.wait()
                if finished < len(files):
                    why = f"the child died with signal {-rc}" if rc < 0 else f"the child exited with status {rc}"
                    self._finding("crash", current, phase, sizes, folder, why, lock)
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                tag, index, rest = line.decode().split(" ", 2)
                current = int(index)
                if tag == "S":
                    phase = rest
                    deadline = time.monotonic() + self.timeout
                else:
                    finished += 1
                    self._result(current, json.loads(rest), sizes, folder, lock)
        sel.close()
        proc.stdout.close()
        return finished + (1 if finished < len(files) else 0)  # (the one that crashed or hung is done)

    def _result(self, index, result, sizes, folder, lock) -> None:
        with lock:
            with open(self.out / "results.jsonl", "a") as f:
                f.write(json.dumps({"index": index, "seed": sizes[index][0], **result}) + "\n")
            if "other" in result:
                self._finding(
                    "other_exception",
                    index,
                    result["phase"],
                    sizes,
                    folder,
                    f"{result['other']}: {result['message']}\n{result['traceback']}",
                    None,
                )
            elif result.get("leak"):
                self._finding("leak", index, "load", sizes, folder, result["leak"], None)
            elif "error" in result:
                self.counts[f"rejected_at_{result['phase']}"] += 1
                self.errors[result["error"]] += 1
            elif result.get("ran"):
                self.counts["ran"] += 1
            else:
                self.counts["loaded_not_run"] += 1

    def _finding(self, kind, index, phase, sizes, folder, detail, lock) -> None:
        if index is None:  # before the first mutant: the child cannot start at all
            raise RuntimeError(
                f"the fuzz child failed to start ({detail}): "
                f"{(folder / 'stderr.txt').read_text(errors='replace')[-3000:]}"
            )
        if lock is not None:
            with lock:
                return self._finding(kind, index, phase, sizes, folder, detail, None)
        self.counts[kind] += 1
        if kind == "loop_timeouts":
            return
        seed_name = sizes[index][0]
        keep = self.out / "findings" / f"{kind}-{index}-{seed_name}.onnx"
        keep.parent.mkdir(exist_ok=True)
        src = folder / f"m{index}.onnx"
        if src.exists():
            shutil.copy(src, keep)
        stderr = (folder / "stderr.txt").read_text(errors="replace")[-3000:] if kind in ("crash", "hang") else ""
        keep.with_suffix(".txt").write_text(f"{kind} in {phase}: {detail}\n{stderr}")
        self.findings.append({"kind": kind, "index": index, "seed": seed_name, "phase": phase, "detail": detail[:500]})
        self.log(f"FINDING {kind} #{index} ({seed_name}, {phase}): {detail.splitlines()[0] if detail else ''}")


def fuzz(
    count: int,
    jobs: int = 2,
    seed: int = 1,
    backend: str = "reference",
    timeout: float = 20.0,
    out: Path | None = None,
    log=print,
) -> tuple[dict, list[dict]]:
    """Run `count` mutants; (summary counts, findings)."""
    own = out is None
    out = Path(tempfile.mkdtemp(prefix="mnn-fuzz-onnx-")) if own else Path(out)
    try:
        fuzzer = Fuzzer(out, seed, backend, timeout, log)
        return fuzzer.run(count, jobs), fuzzer.findings
    finally:
        if own:
            shutil.rmtree(out, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--backend", default="reference")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds without progress that make a hang")
    p.add_argument("--out", default="fuzz-onnx-out", help="where seeds, workers and findings go")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    summary, findings = fuzz(args.count, args.jobs, args.seed, args.backend, args.timeout, Path(args.out))
    print(json.dumps(summary, indent=1))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

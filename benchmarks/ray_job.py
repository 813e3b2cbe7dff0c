"""bench_ray.py --job: a whole batch-inference job, Parquet files in to Parquet files out, through plain
processes, Ray Data and `mnnx batch`, each timed end to end with its CPU seconds (bench_ray.py's --help
says what each path does)."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import time
from pathlib import Path

import numpy as np


def write_rows(folder: Path, rows: int, file_rows: int, row_group: int) -> list[Path]:
    """The job's input: Parquet files of `file_rows` rows (an int64 "id" and a 3x32x32 float32 "x")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    rng = np.random.default_rng(1)
    files = []
    for start in range(0, rows, file_rows):
        n = min(file_rows, rows - start)
        x = rng.standard_normal((n, 3, 32, 32), dtype=np.float32)
        table = pa.table(
            {"id": np.arange(start, start + n, dtype=np.int64), "x": pa.FixedShapeTensorArray.from_numpy_ndarray(x)}
        )
        files.append(folder / f"rows-{start // file_rows:05d}.parquet")
        pq.write_table(table, files[-1], row_group_size=row_group)
    return files


def _job_proc(model: str, backend: str, files: list[Path], out_dir: Path, sub_batch: int) -> None:
    """One plain process of the job: a Session over its files, read and written as a script would."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import mnn_core as mnn
    from mnn_core.ray.blocks import column_to_numpy

    session = mnn.Session(model, backend=backend, threads=1)
    for path in files:
        table = pq.read_table(path)
        x = column_to_numpy(table.column("x"))
        logits = np.concatenate(
            [session.run({"x": x[i : i + sub_batch]})["logits"] for i in range(0, len(x), sub_batch)]
        )
        out = pa.table({"id": table.column("id"), "logits": pa.FixedShapeTensorArray.from_numpy_ndarray(logits)})
        pq.write_table(out, out_dir / path.name)


def plain_job(model: str, backend: str, files: list[Path], out_dir: Path, sub_batch: int, n: int) -> float:
    """Seconds for n fresh processes to do the whole job, each every n-th file: start to last write."""
    ctx = mp.get_context("spawn")
    out_dir.mkdir()
    t = time.perf_counter()
    procs = [ctx.Process(target=_job_proc, args=(model, backend, files[i::n], out_dir, sub_batch)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    seconds = time.perf_counter() - t
    if any(p.exitcode for p in procs):
        raise SystemExit(f"a plain process failed (exit codes {[p.exitcode for p in procs]})")
    return seconds


def ray_job(model: str, backend: str, src: Path, out_dir: Path, n: int, batch_size: int, sub_batch: int) -> float:
    """Seconds for read_parquet -> predict on n actors -> write_parquet, as a user's script runs it."""
    import ray

    import mnn_core.ray as mray

    t = time.perf_counter()
    ds = ray.data.read_parquet(str(src))
    out = mray.predict(ds, model, backend=backend, workers=n, batch_size=batch_size, sub_batch=sub_batch)
    out.write_parquet(str(out_dir))
    return time.perf_counter() - t


def batch_job(model: str, backend: str, src: Path, out_dir: Path, n: int, block_rows: int, sub_batch: int) -> float:
    """Seconds for `mnnx batch` (run_batch) on n actors of the connected cluster, start to last part."""
    from mnn_core.ray.cli_batch import run_batch

    t = time.perf_counter()
    run_batch(
        model, src, out_dir, backend=backend, workers=n, block_rows=block_rows, sub_batch=sub_batch, progress=False
    )
    return time.perf_counter() - t


def read_output(out_dir: Path) -> np.ndarray:
    """The logits of a job's output folder, in id order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mnn_core.ray.blocks import column_to_numpy

    table = pa.concat_tables([pq.read_table(p, columns=["id", "logits"]) for p in sorted(out_dir.glob("*.parquet"))])
    return column_to_numpy(table.column("logits"))[np.argsort(table.column("id").to_numpy())]


class CpuMeter:
    """CPU seconds used inside `with` by this process, its waited-for children (the plain processes) and
    the processes of `sessions` (a cluster's nodes): a job's cost in CPU, which the machine's other load
    changes far less than its wall time. The cluster's processes are sampled every `period` seconds, so
    a worker that exits meanwhile counts up to its last sample (Ray does not account its exited workers
    to their parent). Linux /proc; nan elsewhere."""

    def __init__(self, sessions: set[int], period: float = 0.2):
        self.sessions, self.period, self.seconds = sessions, period, float("nan")

    def _cluster(self) -> dict[int, float]:
        found = {}
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.getsid(int(entry)) in self.sessions:
                    fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                    found[int(entry)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, ValueError):
                continue  # gone meanwhile
        return found

    @staticmethod
    def _own() -> float:
        import resource

        return sum(
            u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        )

    def _watch(self) -> None:
        while not self._done.wait(self.period):
            self.last.update(self._cluster())

    def __enter__(self) -> CpuMeter:
        import threading

        if os.path.isdir("/proc"):
            self.own, self.first = self._own(), self._cluster()
            self.last, self._done = dict(self.first), threading.Event()
            self._thread = threading.Thread(target=self._watch, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if os.path.isdir("/proc"):
            self._done.set()
            self._thread.join()
            self.last.update(self._cluster())
            cluster = sum(v - self.first.get(pid, 0.0) for pid, v in self.last.items())
            self.seconds = self._own() - self.own + cluster


def run_job(args, folder: Path, onnx_path: Path) -> None:
    """bench_ray.py --job (its --help says what is timed), on the model at `onnx_path`."""
    import ray

    import mnn_core as mnn
    import mnn_core.ray as mray

    model = folder / "small_cnn.mnn"
    mnn.save(mnn.load(onnx_path), model)
    files = write_rows(folder / "rows", args.rows, args.file_rows, args.block_rows)
    n, seconds = args.workers, {"plain": [], "ray": [], "batch": []}
    cluster = mray.LocalCluster(
        nodes=args.nodes, cpus_per_node=args.cpus_per_node, object_store_bytes=args.store_mb << 20
    )
    cluster.start()
    cluster.connect()
    sessions, cpu = {p.pid for p in cluster._procs}, {}  # the node processes lead their sessions
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        loads = [os.getloadavg()[0]]
        for r in range(args.job_rounds):
            plain_out, ray_out, batch_out = folder / f"plain-{r}", folder / f"ray-{r}", folder / f"batch-{r}"
            with CpuMeter(sessions) as cpu["plain"]:
                seconds["plain"].append(plain_job(str(model), args.backend, files, plain_out, args.sub_batch, n))
            with CpuMeter(sessions) as cpu["ray"]:
                seconds["ray"].append(
                    ray_job(str(model), args.backend, folder / "rows", ray_out, n, args.batch_size, args.sub_batch)
                )
            with CpuMeter(sessions) as cpu["batch"]:
                seconds["batch"].append(
                    batch_job(str(model), args.backend, folder / "rows", batch_out, n, args.block_rows, args.sub_batch)
                )
            loads.append(os.getloadavg()[0])
            want = read_output(plain_out)
            assert len(want) == args.rows, f"the plain processes wrote {len(want)} rows of {args.rows}"
            for out in (ray_out, batch_out):
                np.testing.assert_allclose(read_output(out), want, rtol=1e-5, atol=1e-5)
            for out in (plain_out, ray_out, batch_out):
                shutil.rmtree(out)
    finally:
        ray.shutdown()
        cluster.stop()
    plain, ray_s = min(seconds["plain"]), min(seconds["ray"])
    print(
        f"job: {args.rows} rows of 3x32x32 in {len(files)} Parquet files, backend {args.backend}, "
        f"sub-batch {args.sub_batch}, Ray batch {args.batch_size}, {args.nodes}-node LocalCluster of "
        f"{args.cpus_per_node} CPU(s) each; best of {args.job_rounds}"
    )
    print(f"  1-minute load average before and after each round: {' -> '.join(f'{x:.1f}' for x in loads)}")
    print("  (CPU: the last round's, of this process, the plain processes and every process of the cluster)")
    print(
        f"  plain {n} (processes started, read, run, write)   {plain:7.2f} s {args.rows / plain:9.0f} rows/s"
        f"  CPU {cpu['plain'].seconds:6.1f} s"
    )
    print(
        f"  ray {n} (read_parquet -> predict -> write_parquet) {ray_s:7.2f} s {args.rows / ray_s:9.0f} rows/s"
        f"  CPU {cpu['ray'].seconds:6.1f} s"
    )
    batch = min(seconds["batch"])
    print(
        f"  batch {n} (mnnx batch: actors read and write)     {batch:7.2f} s {args.rows / batch:9.0f} rows/s"
        f"  CPU {cpu['batch'].seconds:6.1f} s"
    )
    print(f"  ray {n} / plain {n}: {plain / ray_s:.2f}; batch {n} / plain {n}: {plain / batch:.2f}")

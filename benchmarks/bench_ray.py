"""Batch inference throughput through Ray Data against plain processes and a plain loop.

    python benchmarks/bench_ray.py --rows 4096 --backend x86 --nodes 2

The model: a small CNN on 3x32x32 rows (Conv 3->16, Conv 16->32 stride 2, global pool, Gemm 32->10), built
as ONNX so that ONNX Runtime runs the same file. Rows/s, the best of --rounds, for:
  - loop: one Session in this process over all rows, sub-batches of --sub-batch;
  - procs N: N plain processes (multiprocessing), each a Session over 1/N of the rows, timed from the
    moment every process has its Session open and its rows (so start-up is not counted: the bound
    the issue sets Ray against);
  - ray N: mnn_core.ray.predict with N actors of one thread (Ray Data, --nodes: a LocalCluster of that
    many nodes, or 0 for ray.init() with N CPUs);
  - ray-ort N: the same actors running ONNX Runtime (one intra-op thread) on the same model;
  - batch N: N `mnnx batch` workers (BlockWorker actors) over the rows as Parquet, --block-rows a block,
    timed once every actor is up and has run a block (the steady state, start-up out as for procs N).
Ray runs are timed end to end, actor start-up included (the pool is made per run, as a user's run makes
it): a fixed cost of seconds, so the rate rises with --rows. (Rates from the first output batch on were
tried and dropped: Ray Data buffers outputs, so the first batch arrives late and the rate comes out
higher than the Session's own.)
Outputs of every path are checked against the loop's first.

--breakdown: where a Ray Data run's fixed cost goes, instead of the comparisons above. One run of
--rows rows (materialized in the object store first) per engine and actor count (1 and --workers),
each actor writing wall-clock stamps (one clock for every process of the machine) as it starts:
its process's start, __init__ entered, plugins loaded, model fetched from the object store, Graph
loaded, Session open and planned, first block in, last block out, and its busy seconds (inside
__call__). Engines: mnn (mnn_core.ray.predict's own Predictor, the model shipped as predict ships it),
ort (ONNX Runtime) and none (returns zeros: Ray Data's own cost, the rows' transfer included).
Times are seconds from the run's start (the driver's call to map_batches; ship included for mnn).

--job: the issue's bound as a user meets it (Ray Data on --workers actors against as many plain
processes), instead of the comparisons above. Before any timing, the rows (--rows, random 3x32x32
float32 with an int64 "id") are written once as Parquet files of --file-rows rows, and the model is
saved as .mnn (both paths open the same file). Then each path is timed end to end, from nothing
running to every output written:
  - plain N: N processes started (spawn); each imports mnn, opens a Session, reads its share of the
    files (every N-th), runs them in sub-batches and writes one Parquet file of id and logits per input;
  - ray N: ray.data.read_parquet(folder) -> mnn_core.ray.predict(workers=N) -> write_parquet(folder):
    actor start-up, the model's shipping, the reads, the object store and the writes all inside;
  - batch N: `mnnx batch MODEL --input folder --output folder --workers N` on the same cluster
    (run_batch; blocks of --block-rows rows): actors that read their blocks from the files and write
    their parts themselves, so the rows never pass through the object store.
The cluster (--nodes) is started before and is not timed: a user's cluster is already up. Both
outputs are checked against each other, row by row. Pick --rows so that the Sessions' work is tens
of seconds (the default, 262144 rows in 32 files, is 3.2 GB of input and about 15 s of one core's
Session work on a quiet 2-core AMD EPYC); the fixed costs are then what a real job pays, not what
dominates a toy one. --job-rounds repeats the pair (the best of each is kept).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ray_job import run_job  # noqa: E402  (benchmarks/ is not a package)


def build_onnx(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def const(name, shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [
            const("w1", (16, 3, 3, 3)),
            const("b1", (16,)),
            const("w2", (32, 16, 3, 3)),
            const("b2", (32,)),
            const("w3", (32, 10)),
            const("b3", (10,)),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


class OrtPredictor:
    """A Ray Data callable running ONNX Runtime on one thread: the baseline engine in the same actors."""

    def __init__(self, path: str, sub_batch: int):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self.sub_batch = sub_batch

    def __call__(self, batch):
        x = batch["x"]
        parts = [self.session.run(None, {"x": x[i : i + self.sub_batch]})[0] for i in range(0, len(x), self.sub_batch)]
        return {"id": batch["id"], "logits": np.concatenate(parts)}


def _proc(model: str, backend: str, x: np.ndarray, sub_batch: int, barrier, out) -> None:
    import mnn_core as mnn

    session = mnn.Session(model, backend=backend, threads=1)
    session.run({"x": x[:sub_batch]})  # planned before the clock starts, as the actors' first batch plans
    barrier.wait()
    t = time.perf_counter()
    for i in range(0, len(x), sub_batch):
        session.run({"x": x[i : i + sub_batch]})
    out.put(time.perf_counter() - t)


def plain_processes(model: str, backend: str, x: np.ndarray, sub_batch: int, n: int) -> float:
    """Seconds for n processes to run their shares once all are ready (the slowest one's time)."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n), ctx.Queue()
    shards = np.array_split(x, n)
    procs = [ctx.Process(target=_proc, args=(model, backend, s, sub_batch, barrier, out)) for s in shards]
    for p in procs:
        p.start()
    times = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return max(times)


def runner_steady(model: Path, src: Path, out: Path, n: int, block_rows: int, sub_batch: int, backend: str) -> float:
    """Seconds for n `mnnx batch` workers (BlockWorker actors) to do every block once they are up and planned:
    the Ray path's steady state, comparable with the plain processes (whose start-up is not timed either)."""
    import ray

    from mnn_core.ray.blocks import plan_blocks
    from mnn_core.ray.cli_batch import BlockWorker
    from mnn_core.ray.model import ship

    blocks, _ = plan_blocks(src, block_rows)
    out.mkdir()
    options = {"backend": backend, "threads": 1, "sub_batch": sub_batch}
    ref = ship(model)
    pool = [ray.remote(num_cpus=1)(BlockWorker).remote(ref, str(out), options) for _ in range(n)]
    try:
        ray.get([a.run.remote(blocks[i]) for i, a in enumerate(pool)])  # up, and planned on a block each
        t = time.perf_counter()
        ray.get([pool[i % n].run.remote(b) for i, b in enumerate(blocks)])
        return time.perf_counter() - t
    finally:
        for a in pool:
            ray.kill(a)


def _process_start() -> float:
    """This process's start, on time.time()'s clock (Linux /proc; nan elsewhere)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(int(line.split()[1]) for line in open("/proc/stat") if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return float("nan")


class StampedActor:
    """A Ray Data callable that writes when each step of its start-up ended (see --breakdown)."""

    def __init__(self, engine: str, model, sub_batch: int, folder: str, predictor_kwargs: dict | None = None):
        self.stamps = {"process start": _process_start(), "__init__": time.time()}
        self.file = Path(folder) / f"stamps-{os.getpid()}.json"
        if engine == "mnn":
            from mnn_core.backend.plugins import get_plugins
            from mnn_core.ray.batch import Predictor
            from mnn_core.ray.model import load_bytes
            from mnn_core.ray.resources import load_only

            load_only(predictor_kwargs.get("plugins"))
            get_plugins()
            self.stamps["plugins loaded"] = time.time()
            data = __import__("ray").get(model.ref)
            self.stamps["model fetched"] = time.time()
            graph = load_bytes(data, model.suffix)
            self.stamps["Graph loaded"] = time.time()
            self.run = Predictor(graph, sub_batch=sub_batch, **predictor_kwargs)
            self.run({"x": np.zeros((sub_batch, 3, 32, 32), np.float32)})
            self.stamps["Session planned"] = time.time()
        elif engine == "ort":
            self.run = OrtPredictor(model, sub_batch)
            self.stamps["Session planned"] = time.time()
        else:
            self.run = lambda batch: {"id": batch["id"], "logits": np.zeros((len(batch["x"]), 10), np.float32)}
        self.busy, self.calls = 0.0, 0
        self._write()  # an actor that gets no block is listed too

    def __call__(self, batch):
        t = time.time()
        self.stamps.setdefault("first block in", t)
        out = self.run(batch)
        self.stamps["last block out"] = end = time.time()
        self.busy += end - t
        self.calls += 1
        self._write()
        return {"id": out["id"], "logits": out["logits"]}

    def _write(self) -> None:
        self.file.write_text(json.dumps({"stamps": self.stamps, "busy": self.busy, "calls": self.calls}))


def breakdown(args, folder: Path, model: Path, x: np.ndarray) -> None:
    """Print each run's stamps (see --breakdown in the module docstring)."""
    import ray

    import mnn_core.ray as mray
    from mnn_core.ray.resources import actor_plugins

    ds = ray.data.from_items([{"id": i, "x": r} for i, r in enumerate(x)], override_num_blocks=32).materialize()
    for n in sorted({1, args.workers}):
        for engine in ("none", "ort", "mnn"):
            stamps_dir = folder / f"stamps-{engine}-{n}"
            stamps_dir.mkdir()
            t0 = time.time()
            ref, kwargs = str(model), None
            if engine == "mnn":
                ref = mray.ship(str(model))
                kwargs = {"backend": args.backend, "threads": 1, "plugins": actor_plugins(args.backend, ref.suffix)}
            shipped = time.time()
            out = ds.map_batches(
                StampedActor,
                fn_constructor_args=(engine, ref, args.sub_batch, str(stamps_dir), kwargs),
                num_cpus=1,
                compute=ray.data.ActorPoolStrategy(size=n),
                batch_size=args.batch_size,
                batch_format="numpy",
            )
            first, rows = None, 0
            for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                first = first or time.time()
                rows += len(batch["id"])
            end = time.time()
            assert rows == len(x), f"{engine}: {rows} rows came back of {len(x)}"
            print(
                f"{engine} x{n}: {end - t0:.2f} s end to end; ship {shipped - t0:.2f}, first output "
                f"{first - t0:.2f}; load average {os.getloadavg()[0]:.1f}"
            )
            for f in sorted(stamps_dir.glob("stamps-*.json")):
                got = json.loads(f.read_text())
                steps = sorted(got["stamps"].items(), key=lambda kv: kv[1])
                print("    " + ", ".join(f"{k} {v - t0:.2f}" for k, v in steps), end="")
                print(f"; busy {got['busy']:.2f} s in {got['calls']} blocks")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=4096, help="rows (default 4096; with --job 262144)")
    p.add_argument("--backend", default="x86")
    p.add_argument("--sub-batch", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=512, help="rows per Ray Data batch (default 512)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument(
        "--block-rows", type=int, default=1024, help="rows per mnnx batch block and per row group of --job's files"
    )
    p.add_argument("--nodes", type=int, default=2, help="LocalCluster nodes of one CPU (--job: below); 0: ray.init()")
    p.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime in the actors")
    p.add_argument("--workers", type=int, default=2, help="--job, --breakdown: actors and processes (default 2)")
    p.add_argument("--breakdown", action="store_true", help="time each actor's start-up steps instead (see above)")
    job = p.add_argument_group("--job: end to end from Parquet on disk to Parquet on disk (see above)")
    job.add_argument("--job", action="store_true", help="time the job instead of the comparisons above")
    job.add_argument("--file-rows", type=int, default=8192, help="rows per input Parquet file (default 8192)")
    job.add_argument("--job-rounds", type=int, default=1, help="times each path runs; the best counts (default 1)")
    job.add_argument(
        "--cpus-per-node",
        type=int,
        default=2,
        help="logical CPUs of each node (default 2: with 1, the actors hold every CPU and Ray Data's read and "
        "write tasks never start)",
    )
    job.add_argument("--store-mb", type=int, default=400, help="object store of each node, MB (default 400)")
    args = p.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout` too stops the cluster and removes the rows
    if args.job:
        if args.rows == p.get_default("rows"):
            args.rows = 262144
        folder = Path(tempfile.mkdtemp(prefix="bench-ray-job-"))
        try:
            build_onnx(folder / "small_cnn.onnx")
            run_job(args, folder, folder / "small_cnn.onnx")
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # gigabytes of rows and outputs
        return
    import ray

    import mnn_core as mnn
    import mnn_core.ray as mray

    folder = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    model = folder / "small_cnn.onnx"
    build_onnx(model)
    x = np.random.default_rng(1).standard_normal((args.rows, 3, 32, 32), dtype=np.float32)
    session = mnn.Session(str(model), backend=args.backend, threads=1)
    want = np.concatenate(
        [session.run({"x": x[i : i + args.sub_batch]})["logits"] for i in range(0, len(x), args.sub_batch)]
    )
    results: dict[str, float] = {}

    def record(name: str, seconds: float) -> None:
        results[name] = max(results.get(name, 0.0), args.rows / seconds)

    for _ in range(0 if args.breakdown else args.rounds):
        t = time.perf_counter()
        for i in range(0, len(x), args.sub_batch):
            session.run({"x": x[i : i + args.sub_batch]})
        record("loop (1 Session, this process)", time.perf_counter() - t)
        for n in (1, 2):
            record(
                f"procs {n} (plain processes, Session ready)",
                plain_processes(str(model), args.backend, x, args.sub_batch, n),
            )

    cluster = None
    if args.nodes:
        cluster = mray.LocalCluster(nodes=args.nodes, cpus_per_node=1, object_store_bytes=400 * 1024 * 1024).start()
        cluster.connect()
    else:
        ray.init(num_cpus=2, logging_level="ERROR", log_to_driver=False, include_dashboard=False)
    try:
        ray.data.DataContext.get_current().enable_progress_bars = False
        if args.breakdown:
            breakdown(args, folder, model, x)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        src = folder / "rows.parquet"
        pq.write_table(
            pa.table({"x": pa.FixedShapeTensorArray.from_numpy_ndarray(x)}), src, row_group_size=args.block_rows
        )
        for r in range(args.rounds):
            for n in (1, 2):
                out_dir = folder / f"parts-{n}-{r}"
                record(
                    f"batch {n} (mnnx batch actors, up and planned)",
                    runner_steady(model, src, out_dir, n, args.block_rows, args.sub_batch, args.backend),
                )
                parts = pa.concat_tables([pq.read_table(p) for p in sorted(out_dir.glob("part-*.parquet"))])
                np.testing.assert_allclose(
                    parts.column("logits").combine_chunks().to_numpy_ndarray(), want, rtol=1e-5, atol=1e-5
                )
        ds = ray.data.from_items([{"id": i, "x": r} for i, r in enumerate(x)], override_num_blocks=32).materialize()
        ort_kwargs = {"path": str(model), "sub_batch": args.sub_batch}
        for _ in range(args.rounds):
            for n in (1, 2):
                for engine in ("ray", "ray-ort")[: 1 if args.no_ort else 2]:
                    if engine == "ray":
                        out = mray.predict(
                            ds,
                            str(model),
                            backend=args.backend,
                            workers=n,
                            batch_size=args.batch_size,
                            sub_batch=args.sub_batch,
                        )
                    else:
                        out = ds.map_batches(
                            OrtPredictor,
                            fn_constructor_kwargs=ort_kwargs,
                            num_cpus=1,
                            compute=ray.data.ActorPoolStrategy(size=n),
                            batch_size=args.batch_size,
                            batch_format="numpy",
                        )
                    t0 = time.perf_counter()
                    ids, got = [], []
                    for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                        ids.append(batch["id"])
                        got.append(batch["logits"])
                    end = time.perf_counter()
                    order = np.argsort(np.concatenate(ids))
                    np.testing.assert_allclose(
                        np.concatenate(got)[order], want, rtol=1e-5 if engine == "ray" else 1e-4, atol=1e-5
                    )
                    what = "mnn" if engine == "ray" else "ONNX Runtime"
                    record(f"{engine} {n} ({what} in Ray Data actors), end to end", end - t0)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)  # the model, the rows as Parquet and the parts: hundreds of MB
    where = f"{args.nodes}-node LocalCluster" if args.nodes else "ray.init"
    print(
        f"{args.rows} rows of 3x32x32, backend {args.backend}, sub-batch {args.sub_batch}, "
        f"Ray batch {args.batch_size}, best of {args.rounds}; {where}"
    )
    for name, rate in results.items():
        print(f"  {name:62s} {rate:9.0f} rows/s")
    procs2 = results.get("procs 2 (plain processes, Session ready)")
    for name in ("ray 2 (mnn in Ray Data actors), end to end", "batch 2 (mnnx batch actors, up and planned)"):
        if procs2 and results.get(name):
            print(f"  {name.split(' (')[0]} / procs 2: {results[name] / procs2:.2f}")


if __name__ == "__main__":
    sys.exit(main())

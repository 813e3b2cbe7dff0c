"""`mnn batch MODEL --input DIR_OR_PARQUET --output OUT`: batch inference over a Ray cluster, resumable.

The driver cuts the input into blocks (blocks.py), ships the model once, and hands blocks to
`workers` actors, each a Predictor (batch.py) that reads its block, runs it and writes its part file.
Actors restart when their process dies and Ray retries the block they held (max_task_retries); a
block whose retries run out goes to another actor. Parts are written whole under fixed names, so
retries and reruns neither lose nor duplicate rows; a rerun skips the parts that exist. Input and
output paths must be visible to every node (one machine, or a shared filesystem).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import ray

from ..errors import MnnError
from ..progress import Progress
from .blocks import Block, check_manifest, done_blocks, plan_blocks, read_block, write_part
from .model import ModelRef, ship
from .resources import actor_plugins, actor_resources

#: blocks queued on one actor beyond the one it runs: its next block is waiting when it finishes
QUEUED_PER_ACTOR = 1
#: times a block is handed to a fresh actor after Ray's own retries on its first actor ran out
REASSIGN = 2


class BlockWorker:
    """One actor: a Predictor, and the block reading and part writing around it."""

    def __init__(self, model: ModelRef, out_dir: str, predictor_options: dict):
        from .batch import Predictor

        self.predictor = Predictor(model, **predictor_options)
        self.out_dir = Path(out_dir)

    def run(self, block: Block) -> int:
        columns = read_block(block, self.predictor.inputs)
        write_part(self.out_dir, block, self.predictor(columns))
        return block.rows


@dataclass
class BatchReport:
    rows: int
    blocks: int
    skipped: int  # blocks done by an earlier run
    seconds: float

    def __str__(self) -> str:
        rate = self.rows / self.seconds if self.seconds else 0.0
        return (
            f"{self.rows} rows in {self.blocks} blocks ({self.skipped} done before) in {self.seconds:.1f}s, "
            f"{rate:.0f} rows/s"
        )


def run_batch(
    model: str | Path,
    source: str | Path,
    output: str | Path,
    *,
    address: str | None = None,
    backend: str | Sequence[str] = "auto",
    threads: int = 1,
    workers: int = 1,
    block_rows: int = 1024,
    sub_batch: int = 64,
    precision: str = "normal",
    num_gpus: float | None = None,
    progress: bool | None = None,
    on_block: Callable[[int], None] | None = None,
) -> BatchReport:
    """Run `model` over every block of `source` not yet in `output` (see the module docstring)."""
    start = time.perf_counter()
    model_path = Path(model)
    if not model_path.is_file():
        raise MnnError(f"model file {model_path} does not exist; check the path")
    if not isinstance(workers, int) or workers < 1:
        raise MnnError(f"--workers must be a positive int, got {workers!r}")
    blocks, input_digest = plan_blocks(source, block_rows)
    out_dir = Path(output)
    check_manifest(
        out_dir,
        {
            "model": hashlib.sha256(model_path.read_bytes()).hexdigest(),
            "input": input_digest,
            "block_rows": block_rows,
            "blocks": len(blocks),
        },
    )
    done = done_blocks(out_dir)
    todo = [b for b in blocks if b.index not in done]
    if not todo:  # nothing left: no cluster needed
        return BatchReport(0, len(blocks), len(done), time.perf_counter() - start)
    started = not ray.is_initialized()  # a Ray this call starts (or connects) is shut down when it ends
    if started:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    pool: list = []
    try:
        resources = actor_resources(backend, threads, num_gpus)
        actor = ray.remote(max_restarts=-1, max_task_retries=3, **resources)(BlockWorker)
        ref = ship(model_path)
        options = dict(backend=backend, threads=threads, precision=precision, sub_batch=sub_batch)
        options["plugins"] = actor_plugins(backend, ref.suffix)
        pool = [actor.remote(ref, str(out_dir.resolve()), options) for _ in range(min(workers, len(todo)))]
        rows = 0
        with Progress(sum(b.rows for b in todo), "mnn batch", enabled=progress) as bar:
            for block in _dispatch(pool, todo, actor, ref, str(out_dir.resolve()), options):
                rows += block.rows
                bar.update(block.rows)
                if on_block is not None:
                    on_block(block.index)
    finally:
        for a in pool:  # on an error too: actors left behind would hold their CPUs on a shared cluster
            ray.kill(a)
        if started:
            ray.shutdown()
    return BatchReport(rows, len(blocks), len(done), time.perf_counter() - start)


def _dispatch(pool: list, todo: list[Block], actor, ref: ModelRef, out_dir: str, options: dict):
    """Yield each block once its part is written; keep every actor busy with QUEUED_PER_ACTOR more."""
    waiting = list(reversed(todo))
    running: dict = {}  # ObjectRef -> (block, actor index, attempts, the actor it went to)
    load = [0] * len(pool)

    def submit(block: Block, attempt: int) -> None:
        i = min(range(len(pool)), key=load.__getitem__)
        load[i] += 1
        running[pool[i].run.remote(block)] = (block, i, attempt, pool[i])

    for _ in range(min(len(waiting), len(pool) * (1 + QUEUED_PER_ACTOR))):
        submit(waiting.pop(), 0)
    while running:
        ready, _ = ray.wait(list(running), num_returns=1)
        block, i, attempt, handle = running.pop(ready[0])
        load[i] -= 1
        try:
            ray.get(ready[0])
        except ray.exceptions.RayActorError as exc:
            if attempt >= REASSIGN:
                raise MnnError(f"block {block.index} failed on {attempt + 1} actors; the last died: {exc}") from None
            if pool[i] is handle:  # one fresh actor in place of the dead one, not one per task it held
                ray.kill(handle)  # gone already; this frees its resources should Ray still count them
                pool[i] = actor.remote(ref, out_dir, options)
            submit(block, attempt + 1)
            continue
        except ray.exceptions.RayTaskError as exc:  # the block itself is bad: a retry would fail the same way
            cause = exc.cause if isinstance(exc.cause, MnnError) else exc
            raise MnnError(
                f"block {block.index} (rows {block.first_row}..{block.first_row + block.rows - 1}, "
                f"{Path(block.files[0]).name}...): {cause}"
            ) from None
        if waiting:
            submit(waiting.pop(), 0)
        yield block


def cmd_batch(args) -> int:
    """The CLI's entry: parse-level checks done by argparse, the rest here."""
    backend = args.backend.split(",") if "," in args.backend else args.backend
    report = run_batch(
        args.model,
        args.input,
        args.output,
        address=args.ray,
        backend=backend,
        threads=args.threads,
        workers=args.workers,
        block_rows=args.block_rows,
        sub_batch=args.sub_batch,
        precision=args.precision,
        num_gpus=args.num_gpus,
    )
    print(f"wrote {args.output}: {report}")
    return 0

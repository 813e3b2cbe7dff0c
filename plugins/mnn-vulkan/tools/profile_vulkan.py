"""Per-dispatch GPU time of one model on Vulkan (timestamps around every dispatch).

    python plugins/mnn-vulkan/tools/profile_vulkan.py --model resnet18 --batch 1 [--option vulkan.tiles=big]
    python plugins/mnn-vulkan/tools/profile_vulkan.py --onnx vit-s16 --batch 16 --by-op

Prints the wall-clock median of session.run, the summed GPU time, and the
slowest dispatches with the shader and the op they belong to: where a model's
time goes, to compare kernels between runs on the same device. --model takes one of
examples/build_models.py's CNNs, --onnx a zoo export's name (tools/zoo_inputs.py) or an ONNX
path; --by-op adds the GPU time summed per op type of the graph (MatMul, Add, Transpose, ...).

--split shows where a run's wall time goes besides the dispatches: the host side of session.run
(feeds checked, the input copied into the session's memory where it cannot be read in place), the
upload (memcpy into staging or the mapping, copy submits, waits for staging), the segments (their
GPU span by timestamps, the rest submit and fence latency plus the upload's DMA still in flight)
and the download (copy submits, fence waits: the DMA, memcpy out). It runs on lavapipe too (there
the arena is mapped: `--option vulkan.staging=1` takes the staged path a discrete GPU takes).
MNN_VULKAN_RUN_COPIES=python and MNN_VULKAN_COPY_CHUNK=33554432 give the copies as they were
before they ran in C and in chunks (A/B).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))


def main(argv=None):
    import mnn_vulkan
    from build_models import MODELS

    import mnn_core as mnn

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet18", choices=sorted(MODELS))
    p.add_argument("--onnx", help="a zoo model's name (vit-s16, bert-base, ...) or an ONNX path, instead of --model")
    p.add_argument("--by-op", action="store_true", help="GPU time summed per op type of the graph")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--precision", default="normal")
    p.add_argument("--option", action="append", default=[], help="session option KEY=VALUE")
    p.add_argument("--per-op", action="store_true", help="one line with every dispatch's time, in order")
    p.add_argument("--split", action="store_true", help="where a run's time goes: host, copies, segments")
    args = p.parse_args(argv)
    options = {"vulkan.profile": True}
    for kv in args.option:
        k, v = kv.split("=", 1)
        options[k] = int(v) if v.isdigit() else v
    if args.onnx:
        from zoo_inputs import zoo_model

        path, feeds = zoo_model(args.onnx, args.batch)
        graph, label = mnn.load(str(path)), args.onnx
    else:
        graph, label = MODELS[args.model](args.batch), args.model
        feeds = {"input": np.random.default_rng(0).standard_normal((args.batch, 3, 224, 224)).astype("float32")}
    sess = mnn.Session(graph, backend="vulkan", fallback=False, precision=args.precision, options=options)
    if args.split:
        context = mnn_vulkan.device.choose(options.get("vulkan.device")).context
        print_split(f"{label} batch {args.batch} {args.precision} {options}", sess, feeds, context, args.repeat)
        return
    walls = []
    for _ in range(args.repeat + 3):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False)
        walls.append((time.perf_counter() - t0) * 1e3)
    times = [t for seg in mnn_vulkan.gpu_times().values() for t in seg]
    gpu = sum(ms for _, ms in times)
    wall = statistics.median(walls[3:])
    print(
        f"{label} batch {args.batch} {args.precision} {options}: wall median {wall:.3f} ms,"
        f" GPU sum {gpu:.3f} ms over {len(times)} dispatches"
    )
    by_shader = defaultdict(float)
    for name, ms in times:
        by_shader[name.split(":")[-1]] += ms
    print("by shader: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(by_shader.items(), key=lambda kv: -kv[1])))
    if args.by_op:
        print("by op type: " + ", ".join(f"{k} {v:.3f}" for k, v in _by_op_type(graph, times)))
    if args.per_op:
        print(
            "per op: "
            + " ".join(
                f"{name.split(':')[0]}={ms * 1e3:.0f}" for name, ms in times if "conv2d" in name or "gemm" in name
            )
        )
    for name, ms in sorted(times, key=lambda t: -t[1])[: args.top]:
        print(f"  {ms:8.4f} ms  {name}")


def print_split(title: str, sess, feeds: dict, context, repeat: int) -> None:
    """Median over `repeat` profiled runs (after 3 warm-ups) of each part of a run, in ms."""
    import mnn_vulkan

    plain = []
    for _ in range(repeat + 3):
        t0 = time.perf_counter()
        sess.run(feeds, copy=False)
        plain.append((time.perf_counter() - t0) * 1e3)
    rows, others = defaultdict(list), defaultdict(int)
    for i in range(repeat + 3):
        before = context.copy_stats()
        t0 = time.perf_counter()
        sess.run(feeds, copy=False, profile=True)
        wall = (time.perf_counter() - t0) * 1e3
        after = context.copy_stats()
        if i < 3:
            continue
        steps = sess.profile()
        part = defaultdict(float)
        for name, ms in steps:
            kind = "upload" if name.endswith("->vulkan") else "download" if name.endswith("vulkan->host") else "other"
            kind = "segment" if name.startswith("segment:vulkan") else kind
            part[kind] += ms
            if kind == "other":
                others[name.split(":")[0] + ":" + name.split(":")[-1]] += 1
        gpu = sum(ms for seg in mnn_vulkan.gpu_times().values() for _, ms in seg)
        rows["wall, profiled run"].append(wall)
        rows["host side of session.run (wall - steps)"].append(wall - sum(ms for _, ms in steps))
        for way, kind in (("in", "upload"), ("out", "download")):
            d = {
                k: (after[way][k] - before[way][k]) * (1e3 if k in ("host", "submit", "wait") else 1)
                for k in after[way]
            }
            rows[f"{kind} step"].append(part[kind])
            rows[f"  {kind}: memcpy {'to' if way == 'in' else 'from'} staging / mapping"].append(d["host"])
            rows[f"  {kind}: copy commands recorded + submitted"].append(d["submit"])
            rows[f"  {kind}: fence waits"].append(d["wait"])
            rows[f"  {kind}: bytes"].append(d["bytes"])
            if kind == "upload":
                rows["segment steps"].append(part["segment"])
                rows["  segments: GPU span (timestamps)"].append(gpu)
                rows["  segments: submit + wait besides it (and the upload's DMA in flight)"].append(
                    part["segment"] - gpu
                )
                rows["other steps (on the host, not copies)"].append(part["other"])
    import os

    knobs = {
        k: os.environ[k]
        for k in ("MNN_VULKAN_RUN_COPIES", "MNN_VULKAN_COPY_CHUNK", "MNN_VULKAN_UPLOAD", "MNN_VULKAN_COPY_THREADS")
        if k in os.environ
    }
    print(
        "memory types: " + ", ".join(f"{flags} ({heap / 2**30:.1f} GiB heap)" for flags, heap in context.memory_types())
    )
    staging, upload = context.staging_memory()
    print(f"staging buffer: {staging or '(none: mapped arena)'}; uploads written into: {upload or '-'}")
    print(f"{title} {knobs or ''}: where a run goes, median of {repeat} runs (ms)")
    print(f"  {'wall, plain run (copy=False)':<72} {statistics.median(plain[3:]):9.3f}")
    for name, values in rows.items():
        value = statistics.median(values)
        text = f"{int(value):9d}" if name.endswith("bytes") else f"{value:9.3f}"
        print(f"  {name:<72} {text}")
    kinds = defaultdict(int)
    for name, _ in sess.profile():
        kinds[name.split(":")[0] + (":" + name.split(":")[1] if name.startswith("segment") else "")] += 1
    print("  steps of a run: " + ", ".join(f"{k} x{n}" for k, n in kinds.items()))
    if others:
        print("  other steps: " + ", ".join(sorted(others))[:300])


def _by_op_type(graph, times) -> list[tuple[str, float]]:
    """GPU ms summed per op type (a dispatch is named after its node; a fused node "a+b" after
    the types it replaces, "MatMul+Add"), largest first, with each type's dispatch count."""
    kinds = {node.name: node.op for node in getattr(graph, "nodes", ())}
    total, count = defaultdict(float), defaultdict(int)
    for name, ms in times:
        parts = name.split(":")[0].split("+")
        kind = "+".join(kinds.get(p, p.rsplit("/", 1)[-1].rstrip("_0123456789") or p) for p in parts)
        total[kind] += ms
        count[kind] += 1
    return [(f"{k}[{count[k]}]", v) for k, v in sorted(total.items(), key=lambda kv: -kv[1])]


if __name__ == "__main__":
    main()

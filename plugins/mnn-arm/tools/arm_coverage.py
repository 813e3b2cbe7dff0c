"""Which zoo and corpus models mnn-arm runs whole (Session(backend="arm", fallback=False)), and which
ops keep the others on the reference kernels.

Two steps, since the arm64 root has no onnx package:

    python plugins/mnn-arm/tools/arm_coverage.py export DIR           # host: each model as DIR/<name>.mnn
                                                                      # and its inputs as DIR/<name>.npz
    MNN_ARM_RUN=python plugins/mnn-arm/tools/arm_rootfs_test.sh \\
        $PWD/plugins/mnn-arm/tools/arm_coverage.py check DIR          # under qemu (an absolute path)

`check --run [--max-mb=N] [--threads=T]` also runs each model that plans whole (files up to N MB) with
fallback=False (on T threads) and compares its outputs with ONNX Runtime's on the host (saved by `export`).

`check` plans every model for its inputs' shapes with fallback on and lists, per model, the ops
the plan put on another backend (nothing is run: planning is what decides fallback=False). The
models: the architecture zoo's small variants (benchmarks/zoo_arch, both exporters, from
~/.cache/mnn/zoo-arch) and the real-model corpus (mnn_core.zoo, from ~/.cache/mnn/zoo).

A model with control flow (If / Loop), which .mnn does not store, is exported as DIR/<name>.graph.pkl:
the Graph pickled with its arrays as (dtype, shape, bytes), which the root's older numpy reads back.
Such a graph runs as planned pieces between its control ops (mnn_core/runtime/eager.py); `check`
asks for fallback=False, which names the first op without an arm kernel.
"""

from __future__ import annotations

import collections
import json
import pickle
import sys
from pathlib import Path

import numpy as np

GRAPH_SUFFIX = ".graph.pkl"


def _array(dtype: str, shape: tuple, data: bytes) -> np.ndarray:
    return np.frombuffer(data, np.dtype(dtype)).reshape(shape).copy()


def _scalar(dtype: str, data: bytes):
    return np.frombuffer(data, np.dtype(dtype))[0]


class _PortablePickler(pickle.Pickler):
    """numpy arrays, scalars and dtypes as plain (dtype, shape, bytes): numpy 2's own pickles name
    numpy._core, which the arm64 root's numpy 1.24 lacks."""

    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray) and obj.dtype != object:
            return _array, (obj.dtype.str, obj.shape, obj.tobytes())
        if isinstance(obj, np.generic) and not isinstance(obj, np.object_):
            return _scalar, (obj.dtype.str, obj.tobytes())
        if isinstance(obj, np.dtype):
            return np.dtype, (obj.str,)
        return NotImplemented


class _PortableUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if name in ("_array", "_scalar"):  # this module's, whatever name it ran under when saved
            return {"_array": _array, "_scalar": _scalar}[name]
        return super().find_class(module, name)


def save_graph(graph, path: Path) -> None:
    with open(path, "wb") as f:
        _PortablePickler(f, protocol=4).dump(graph)


def load_graph(path: Path):
    with open(path, "rb") as f:
        return _PortableUnpickler(f).load()


def export(out: Path) -> None:
    import mnn_core as mnn
    from mnn_core.errors import MnnFormatError

    root = Path(__file__).resolve().parents[3]
    sys.path.insert(0, str(root / "benchmarks"))
    out.mkdir(parents=True, exist_ok=True)
    jobs = []
    try:
        from zoo_arch import ARCHES

        arch_cache = Path.home() / ".cache/mnn/zoo-arch"
        for name, arch in sorted(ARCHES.items()):
            for exporter in ("legacy", "dynamo"):
                path = arch_cache / f"{name}-small" / f"{exporter}.onnx"
                if path.exists():
                    jobs.append((f"{name}.{exporter}", path, lambda a=arch: a.make_feeds(1, True)))
    except ImportError as exc:
        print(f"no architecture zoo: {exc}")
    from mnn_core.zoo.corpus import BY_NAME
    from mnn_core.zoo.fetch import cache_dir, model_path

    for name, model in sorted(BY_NAME.items()):
        path = model_path(model, cache_dir())
        if path.exists():
            jobs.append((name, path, model.make_feeds))
    for name, path, feeds in jobs:
        try:
            graph = mnn.load(path)
            try:
                mnn.save(graph, out / f"{name}.mnn")
            except MnnFormatError:  # control flow, which .mnn does not store
                save_graph(graph, out / f"{name}{GRAPH_SUFFIX}")
            inputs = feeds()
            np.savez(out / f"{name}.npz", **inputs)
            try:  # the peer's outputs, for `check --run` (the arm64 root has no onnxruntime)
                import onnxruntime as ort

                sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
                names = [o.name for o in sess.get_outputs()]
                np.savez(out / f"{name}.ort.npz", **dict(zip(names, sess.run(names, inputs))))
            except Exception as exc:  # noqa: BLE001 - no onnxruntime, or a file it refuses
                print(f"{name}: no ONNX Runtime outputs ({type(exc).__name__}: {str(exc)[:100]})")
            print(f"{name}: exported")
        except Exception as exc:  # noqa: BLE001 - a model the converter cannot take is reported, not fatal
            print(f"{name}: not exported ({type(exc).__name__}: {str(exc)[:120]})")


def run_whole(graph, ref: Path, feeds: dict, threads: int = 1) -> str:
    """Run a model that plans whole on arm with fallback=False; compare with ONNX Runtime's outputs (ref)."""
    import mnn_core as mnn

    got = mnn.Session(graph, backend="arm", fallback=False, threads=threads).run(feeds)
    if not ref.exists():
        return "ran (no ONNX Runtime outputs to compare)"
    want, worst = dict(np.load(ref)), 0.0
    for k, w in want.items():
        g = np.asarray(got[k])
        if g.shape != w.shape:
            return f"MISMATCH: {k} has shape {g.shape}, ONNX Runtime {w.shape}"
        if np.issubdtype(w.dtype, np.floating):
            worst = max(worst, float(np.max(np.abs(g - w)) / max(float(np.max(np.abs(w))), 1e-6)) if w.size else 0.0)
        elif not np.array_equal(g, w):
            worst = max(worst, float(np.mean(g != w)))
    return f"ran, max |diff| / max |ORT| = {worst:.1e}"


def check(src: Path, run: bool = False, max_mb: float = 1e9, threads: int = 1) -> int:
    import mnn_core as mnn

    whole, report = [], {}
    missing_all: collections.Counter = collections.Counter()
    paths = sorted(src.glob("*.mnn")) + sorted(src.glob(f"*{GRAPH_SUFFIX}"))
    for path in paths:
        name = path.name[: -len(GRAPH_SUFFIX)] if path.name.endswith(GRAPH_SUFFIX) else path.stem
        eager = ""
        try:
            feeds = dict(np.load(src / f"{name}.npz"))
            graph = load_graph(path) if path.name.endswith(GRAPH_SUFFIX) else mnn.load(path)
            sess = mnn.Session(graph, backend=["arm", "reference"], fallback=True)
            if sess.eager:  # planned pieces between control ops: fallback=False names an op without a kernel
                eager = " (control flow: planned pieces)"
                mnn.Session(graph, backend="arm", fallback=False)
                off = collections.Counter()
            else:
                sess.resize(
                    {k: v.shape for k, v in feeds.items()},
                    {k: v for k, v in feeds.items() if k in sess.value_inputs} or None,
                )
                off = collections.Counter(s.op for s in sess.plan if s.backend != "arm")
        except Exception as exc:  # noqa: BLE001
            report[name] = f"error{eager}: {type(exc).__name__}: {str(exc)[:160]}"
            continue
        if not off:
            whole.append(name)
            report[name] = "whole on arm" + eager
            if run and path.stat().st_size <= max_mb * 1e6:
                try:
                    report[name] += "; " + run_whole(graph, src / f"{name}.ort.npz", feeds, threads)
                except Exception as exc:  # noqa: BLE001
                    report[name] += f"; run failed: {type(exc).__name__}: {str(exc)[:160]}"
            if run:
                print(f"{name:<34} {report[name]}", flush=True)
        else:
            report[name] = ", ".join(f"{op} x{n}" for op, n in sorted(off.items()))
            missing_all.update({op: 1 for op in off})
    for name, line in report.items():
        if not (run and name in whole):  # printed as it ran
            print(f"{name:<34} {line}")
    print(f"\n{len(whole)} of {len(report)} models plan whole on arm (fallback=False runs them)")
    print("ops missing, by number of models that need them:")
    print(json.dumps(dict(missing_all.most_common())))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 2 or args[0] not in ("export", "check"):
        sys.exit(__doc__)
    if args[0] == "export":
        sys.exit(export(Path(args[1])))
    mb = next((float(a.split("=", 1)[1]) for a in args if a.startswith("--max-mb=")), 1e9)
    threads = next((int(a.split("=", 1)[1]) for a in args if a.startswith("--threads=")), 1)
    sys.exit(check(Path(args[1]), run="--run" in args, max_mb=mb, threads=threads))

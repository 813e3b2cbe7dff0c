"""The architecture zoo (benchmarks/zoo_arch): list the models, export them, check them on a backend.

    python benchmarks/zoo_models.py list
    python benchmarks/zoo_models.py export                         # both exporters, every model, into the cache
    python benchmarks/zoo_models.py check                          # every model and exporter on x86
    python benchmarks/zoo_models.py check --model gru-tagger --exporter legacy --backend reference
    python benchmarks/zoo_models.py check --small --json out.json  # the test sizes, results as JSON
    python benchmarks/zoo_models.py check --set corpus             # the real-model corpus (mnn_core.zoo) too

`check` runs each export with ONNX Runtime and with an mnn Session (fallback on) at --batch, compares
the outputs (relative L2 < 1e-4), lists the ops placed on a backend other than --backend (for x86:
the kernels x86 still lacks) and says whether fallback=False works; it ends with those ops, model by
model. It exits 1 when a model fails (export, load, run or mismatch; ONNX Runtime's own failures are
reported, not counted). Exports are cached under ~/.cache/mnn/zoo-arch ($MNN_ZOO_ARCH_CACHE, --cache)
and made again when zoo_arch's sources or torch change. Needs torch (and onnxscript for the dynamo
exporter) and onnxruntime.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from zoo_arch import ARCHES  # noqa: E402
from zoo_arch.export import EXPORTERS  # noqa: E402


def _need(*modules: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        sys.exit(f"zoo_models: this command needs {', '.join(missing)}: pip install {' '.join(missing)}")


def cmd_list(args) -> int:
    for a in ARCHES.values():
        size = ", ".join(f"{k} {v}" for k, v in a.size.items())
        print(f"{a.name:<16} {a.family:<46} {size:<34} {a.ops}")
    return 0


def cmd_export(args) -> int:
    _need("torch", "onnxscript")
    from zoo_arch.export import ExportError, export_info, onnx_file

    bad = [n for n in args.model or [] if n not in ARCHES]
    if bad:
        sys.exit(f"zoo_models: no architecture {', '.join(bad)}; see python benchmarks/zoo_models.py list")
    failed = 0
    for name in args.model or list(ARCHES):
        for exporter in args.exporter or EXPORTERS:
            try:
                path = onnx_file(ARCHES[name], exporter, args.batch, args.cache, args.small)
            except ExportError as e:
                failed += 1
                print(f"{name:<16} {exporter:<7} failed: {e}", flush=True)
                continue
            info = export_info(ARCHES[name], exporter, args.cache, args.small)
            note = "dynamic batch" if info.get("dynamic_batch") else f"static batch: {info.get('dynamic_error', '')}"
            print(f"{name:<16} {exporter:<7} {path}  ({path.stat().st_size / 1e6:.1f} MB, {note})", flush=True)
    return 1 if failed else 0


def _checks(args):
    """(name, source, a function returning its ArchResult) for every file --model/--set choose."""
    from zoo_arch.check import ArchResult, check_arch, check_file

    from mnn_core.zoo.corpus import BY_NAME, MODELS

    def corpus(name):
        from mnn_core.zoo.fetch import FetchError, cache_dir, fetch

        try:
            path = fetch(BY_NAME[name], cache_dir(None))[0]
        except FetchError as e:
            return ArchResult(name, "corpus", "fetch-failed", str(e))
        return check_file(name, "corpus", path, BY_NAME[name].make_feeds(), args.backend, args.threads)

    names = (
        args.model
        or {"arch": list(ARCHES), "corpus": [m.name for m in MODELS], "all": list(ARCHES) + [m.name for m in MODELS]}[
            args.set
        ]
    )
    for name in names:
        if name in ARCHES:
            for exporter in args.exporter or EXPORTERS:
                yield (
                    name,
                    exporter,
                    lambda n=name, e=exporter: check_arch(
                        ARCHES[n], e, args.backend, args.batch, args.cache, args.small, args.threads
                    ),
                )
        elif name in BY_NAME:
            yield name, "corpus", lambda n=name: corpus(n)
        else:
            sys.exit(
                f"zoo_models: no model {name!r}; see python benchmarks/zoo_models.py list "
                "and python -m mnn_core.zoo list"
            )


def cmd_check(args) -> int:
    _need("torch", "onnxscript", "onnxruntime")

    results = []
    print(
        f"{'model':<20} {'source':<8} {'status':<13} {'rel L2':>8} {'mnn s':>6}  fallback=False  "
        f"ops off {args.backend}",
        flush=True,
    )
    for name, source, check in _checks(args):
        r = check()
        results.append(r)
        err = f"{r.error:.1e}" if r.error is not None else "-"
        off = ", ".join(f"{op} x{n}" for op, n in r.elsewhere.items()) or "-"
        strict = r.strict.split(":")[0] if r.strict else "-"
        print(f"{name:<20} {source:<8} {r.status:<13} {err:>8} {r.seconds:6.1f}  {strict:<14}  {off}", flush=True)
        if r.detail:
            print(f"    {r.detail[:400]}", flush=True)
    _print_missing(results, args.backend)
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_dict() for r in results], indent=1))
    return 1 if any(r.failed for r in results) else 0


def _print_missing(results, backend: str) -> None:
    """Op by op: the models whose plan put it off `backend`, and why (the first such node's reason)."""
    by_op: dict[str, list[str]] = {}
    why: dict[str, str] = {}
    for r in results:
        for op in r.elsewhere:
            by_op.setdefault(op, []).append(f"{r.model} ({r.exporter})")
            why.setdefault(op, r.reasons.get(op, ""))
    print(f"\nops placed off {backend} ({len(by_op)}):" if by_op else f"\nevery op placed on {backend}")
    width = max(map(len, by_op), default=0)
    for op, models in sorted(by_op.items(), key=lambda kv: -len(kv[1])):
        print(f"  {op:<{width}} {len(models):>2} files: {', '.join(models)}\n  {'':<{width}}    why: {why[op][:160]}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,export,check}")
    sub.add_parser("list", help="the models, their sizes and what they exercise")
    for cmd, text in (("export", "write the ONNX files (cached)"), ("check", "compare mnn with ONNX Runtime")):
        q = sub.add_parser(cmd, help=text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        q.add_argument(
            "--model",
            action="append",
            metavar="NAME",
            help=f"repeatable; default all of --set. Architectures: {', '.join(ARCHES)}"
            + ("; check also takes corpus models (python -m mnn_core.zoo list)" if cmd == "check" else ""),
        )
        q.add_argument("--exporter", action="append", choices=EXPORTERS, help="default: both")
        q.add_argument(
            "--batch",
            type=int,
            default=2,
            help="the batch run (default 2; a static export is made at it where a dynamic one fails)",
        )
        q.add_argument("--small", action="store_true", help="the small sizes the tests use (seconds per model)")
        q.add_argument("--cache", help="default: $MNN_ZOO_ARCH_CACHE or ~/.cache/mnn/zoo-arch")
        if cmd == "check":
            q.add_argument("--backend", default="x86", help="the mnn backend to check (default x86)")
            q.add_argument(
                "--set",
                choices=("arch", "corpus", "all"),
                default="arch",
                help="the models checked by default: the architectures (default), the corpus, both",
            )
            q.add_argument("--threads", type=int, default=1)
            q.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = p.parse_args(argv)
    return {"list": cmd_list, "export": cmd_export, "check": cmd_check}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

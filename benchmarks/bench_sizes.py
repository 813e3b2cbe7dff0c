""".mnn file sizes, float32 vs int8 (PTQ), and where the bytes of each file go.

    python benchmarks/bench_sizes.py                          # every model
    python benchmarks/bench_sizes.py --model lenet --model mobilenet_small
    git show 71de07a:mnn_core/format.py > /tmp/format_v1.py  # the last mnn writing format version 1
    python benchmarks/bench_sizes.py --writer /tmp/format_v1.py   # the same files written by it

Models: LeNet-5 of examples/qat.py, the MobileNetV2-style net of examples/quant_mobilenet.py (built with
PyTorch, exported to ONNX, imported), and MobileNetV2 / ResNet-18 of examples/build_models.py, all with
seeded untrained weights (file sizes do not depend on training). int8 is `quant.quantize` (minmax, per
channel) with random calibration inputs. The int8 payload is broken down by dtype: int8 weights, int32
biases, float32 (per-channel weight scales and any float tensor left), uint8 zero points.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import struct
import sys
import tempfile
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

import mnn_core as mnn
from mnn_core import quant

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HEADER = struct.Struct("<8sIIQQQQII")  # docs/FORMAT.md


def lenet():
    from mnn_core.testing.models import lenet as build

    mnn.express.manual_seed(0)
    return build().to_graph([(1, 1, 28, 28)]), (1, 28, 28)


def mobilenet_small():
    import torch
    from quant_mobilenet import mobilenet

    torch.manual_seed(0)
    model = mobilenet(torch.nn, torch).eval()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        x = torch.zeros((1, 1, 28, 28))
        torch.onnx.export(
            model,
            (x,),
            path,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
            dynamo=False,
        )
        return mnn.load(path), (1, 28, 28)


def zoo(name):
    def build():
        from build_models import MODELS

        return MODELS[name](1), (3, 224, 224)

    return build


MODELS = {  # key: (title, builder, calibration samples)
    "lenet": ("LeNet-5", lenet, 64),
    "mobilenet_small": ("MobileNetV2-style net (examples/quant_mobilenet.py)", mobilenet_small, 64),
    "mobilenet_v2": ("MobileNetV2", zoo("mobilenet_v2"), 8),
    "resnet18": ("ResNet-18", zoo("resnet18"), 8),
}


def load_writer(path):
    """save_mnn of another format.py (e.g. an older mnn's), imported as a module of this mnn_core."""
    if path is None:
        from mnn_core.format import save_mnn

        return save_mnn
    spec = importlib.util.spec_from_file_location("mnn_core._bench_sizes_writer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.save_mnn


def breakdown(path) -> dict:
    """Where the bytes of an .mnn file go, read the way docs/FORMAT.md describes (version 1 or 2)."""
    blob = Path(path).read_bytes()
    _, version, _, json_off, json_size, data_off, data_size, _, _ = HEADER.unpack_from(blob)
    stored = blob[json_off : json_off + json_size]
    text = zlib.decompress(stored) if version >= 2 else stored
    tensors = json.loads(text)["tensors"]
    payload = sum(t["nbytes"] + t.get("scales_nbytes", 0) for t in tensors.values())
    return dict(
        version=version,
        file=len(blob),
        json_stored=json_size,
        json_text=len(text),
        tensors=len(tensors),
        payload=payload,
        padding=len(blob) - HEADER.size - json_size - payload,  # before the data section and between tensors
    )


def by_dtype(graph) -> dict:
    out = Counter()
    for value in graph.initializers.values():
        out[np.asarray(value).dtype.name] += np.asarray(value).nbytes
    return dict(out.most_common())


def per_channel(graph) -> float:
    """Weights per output channel of the int8 layers (QLinearConv: convolutions and, in these models, the
    fully connected layers); each channel also costs a float32 scale and an int32 bias."""
    weights = [graph.initializers[n.inputs[3]] for n in graph.nodes if n.op == "QLinearConv"]
    return sum(w.size for w in weights) / max(1, sum(w.shape[0] for w in weights))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", choices=sorted(MODELS), help="only these (repeat); default all")
    p.add_argument("--writer", help="a format.py whose save_mnn writes the files (default: this mnn's)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(EXAMPLES))
    save = load_writer(args.writer)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for key in args.model or list(MODELS):
            title, build, n_calib = MODELS[key]
            graph, shape = build()
            calib = np.random.default_rng(0).random((n_calib,) + shape, np.float32)
            int8 = quant.quantize(graph, {"input": calib}, method="minmax", progress=False).graph
            sizes = {}
            for label, g in (("fp32", graph), ("int8", int8)):
                path = os.path.join(tmp, f"{key}.{label}.mnn")
                save(g, path)
                sizes[label] = breakdown(path)
            f, q = sizes["fp32"], sizes["int8"]
            rows.append((title, f["version"], f["file"], q["file"], q["file"] / f["file"], q["payload"] / f["payload"]))
            print(
                f"{title}: {graph.param_count():,} float parameters; int8 weights per output channel (QLinearConv) "
                f"{per_channel(int8):.1f}; int8 initializers by dtype {by_dtype(int8)}"
            )
            for label, b in sizes.items():
                print(f"  {label}: {json.dumps(b)}")
    print("\n| model | format | fp32 bytes | int8 bytes | int8 / fp32 | tensor bytes only |\n|---|---|---|---|---|---|")
    for title, version, fsize, qsize, ratio, payload_ratio in rows:
        print(f"| {title} | v{version} | {fsize} | {qsize} | {ratio:.4f}x | {payload_ratio:.4f}x |")


if __name__ == "__main__":
    main()

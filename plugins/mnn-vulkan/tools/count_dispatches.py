"""Dispatches per run of a zoo export on Vulkan, by shader, and its error against ONNX Runtime.

    python plugins/mnn-vulkan/tools/count_dispatches.py vit-s16 bert-base convnext-t --batch 1
    MNN_VULKAN_FUSE=0 python plugins/mnn-vulkan/tools/count_dispatches.py vit-s16     # fusions off

The count is what a fusion saves on any device (lavapipe included, where timings mean nothing);
the error (relative L2 of the first output) checks the fused kernels on the whole model.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from zoo_inputs import zoo_model


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="+", help="zoo model names (vit-s16, bert-base, ...) or ONNX paths")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--option", action="append", default=[], help="session option KEY=VALUE")
    args = p.parse_args(argv)
    import mnn_vulkan
    import onnxruntime as ort

    import mnn_core as mnn

    options = dict(kv.split("=", 1) for kv in args.option)
    for name in args.model:
        path, feeds = zoo_model(name, args.batch)
        sess = mnn.Session(mnn.load(str(path)), backend="vulkan", fallback=False, options=options)
        got = next(iter(sess.run(feeds).values()))
        placed = {pl.node for pl in sess.plan.placements}
        shaders = Counter(s for seg in mnn_vulkan.segments().values() if set(seg.names) <= placed for s in seg.shaders)
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        print(
            f"{name} batch {args.batch}: {sum(shaders.values())} dispatches, {len(sess.plan.fused)} fused nodes,"
            f" rel L2 vs ONNX Runtime {err:.2e}; " + ", ".join(f"{k} {v}" for k, v in shaders.most_common()),
            flush=True,
        )


if __name__ == "__main__":
    main()

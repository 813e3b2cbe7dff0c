"""MobileNetV2, ResNet-18 and SqueezeNet 1.1 (examples/build_models.py) on OpenGL
with fallback=False against the reference backend: max relative error and the
median run time. Usage: python plugins/mnn-opengl/tools/check_models.py [SIZE [BATCH [REPEAT]]]"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples"))

from build_models import MODELS  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.graph.ir import TensorInfo  # noqa: E402


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 224
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    from mnn_core.backend import get_plugins

    print(get_plugins().backends["opengl"].devices()[0].name)
    for name in ["mobilenet_v2", "resnet18", "squeezenet1_1"]:
        graph = MODELS[name](batch)
        graph.inputs["input"] = TensorInfo((batch, 3, size, size), "float32")
        x = np.random.default_rng(0).standard_normal((batch, 3, size, size)).astype("float32")
        sess = mnn.Session(graph, backend="opengl", fallback=False)
        got = sess.run({"input": x})["logits"]
        assert set(sess.plan.backends()) == {"opengl"}
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            sess.run({"input": x})
            times.append((time.perf_counter() - t0) * 1e3)
        want = mnn.Session(graph, backend="reference").run({"input": x})["logits"]
        err = float(np.abs(got - want).max() / np.abs(want).max())
        print(
            f"{name} {batch}x3x{size}x{size}: rel err {err:.1e}, median {statistics.median(times):.1f} ms, "
            f"min {min(times):.1f} ms"
        )


if __name__ == "__main__":
    main()

"""Tensor cores against the plain float16 shaders: GPU time per MatMul and per convolution
at precision="low", with gemm_coop.comp / conv_coop.comp and without ("vulkan.coopmat": False),
and PyTorch CUDA fp16 for the same product when torch sees a GPU.

    python plugins/mnn-vulkan/tools/bench_coopmat.py [--repeat 50]

GPU times are medians over runs of the product's dispatches alone (Vulkan timestamps,
"vulkan.profile"), not the host copies around them; PyTorch's are CUDA-event times of the
product on tensors already on the GPU. TFLOP/s counts 2*M*N*K per product.
"""

from __future__ import annotations

import argparse

import numpy as np

import mnn_core as mnn

MATMULS = [(1, 512, 512, 512), (1, 2048, 2048, 2048), (8, 512, 1024, 768), (1, 4096, 4096, 4096)]
# (n, c, h, w, o, kernel): ResNet-50's 1x1 and 3x3 layers at batch 16 (3x3: padding 1)
CONVS = [(16, 256, 56, 56, 64, 1), (16, 1024, 14, 14, 256, 1), (16, 512, 7, 7, 2048, 1)]
CONVS += [(16, 64, 56, 56, 64, 3), (16, 256, 14, 14, 256, 3), (16, 512, 7, 7, 512, 3)]


def _gpu_ms(sess, feeds, repeat: int) -> float:
    """Median GPU time of the session's GEMM or convolution dispatches (copies in and out left out)."""
    import mnn_vulkan

    sess.run(feeds)
    names = {n.name for n in sess.graph.nodes}
    times = []
    for _ in range(repeat):
        sess.run(feeds)
        runs = [r for seg, r in mnn_vulkan.gpu_times().items() if names & set(mnn_vulkan.segments()[seg].names)]
        times.append(
            sum(ms for r in runs for name, ms in r if any(k in name for k in ("gemm", "conv2d", "conv_coop", "splitk")))
        )
    return float(np.median(times))


def _matmul(batch, m, k, n):
    b = mnn.GraphBuilder()
    a = b.input("a", (batch, m, k))
    w = b.const(np.random.default_rng(0).uniform(-1, 1, (k, n)).astype("float32"))
    b.output(b.MatMul(a, w), "y")
    return b.build(), {"a": np.random.default_rng(1).uniform(-1, 1, (batch, m, k)).astype("float32")}


def _conv(n, c, h, w, o, kernel):
    b = mnn.GraphBuilder()
    x = b.input("x", (n, c, h, w))
    wt = b.const(np.random.default_rng(0).uniform(-1, 1, (o, c, kernel, kernel)).astype("float32"))
    b.output(b.Conv(x, wt, pads=[kernel // 2] * 4), "y")
    return b.build(), {"x": np.random.default_rng(1).uniform(-1, 1, (n, c, h, w)).astype("float32")}


def _torch_ms(shape, repeat):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    batch, m, k, n = shape
    a = torch.randn(batch, m, k, device="cuda", dtype=torch.float16)
    w = torch.randn(k, n, device="cuda", dtype=torch.float16)

    times = []
    for i in range(repeat + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ w
        end.record()
        torch.cuda.synchronize()
        if i:
            times.append(start.elapsed_time(end))
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    print("| op | shape | coopmat ms | plain fp16 ms | speed-up | coopmat TFLOP/s | torch fp16 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    cases = [("MatMul", s, _matmul(*s), 2 * s[0] * s[1] * s[2] * s[3]) for s in MATMULS]
    cases += [(f"Conv {s[5]}x{s[5]}", s, _conv(*s), 2 * s[0] * s[1] * s[2] * s[3] * s[4] * s[5] ** 2) for s in CONVS]
    for name, shape, (graph, feeds), flops in cases:
        ms = {}
        for label, coop in (("coop", True), ("plain", False)):
            sess = mnn.Session(
                graph,
                backend="vulkan",
                fallback=False,
                precision="low",
                options={"vulkan.coopmat": coop, "vulkan.profile": True},
            )
            ms[label] = _gpu_ms(sess, feeds, args.repeat)
        torch_ms = _torch_ms(shape, args.repeat) if name == "MatMul" else None
        print(
            f"| {name} | {'x'.join(map(str, shape))} | {ms['coop']:.3f} | {ms['plain']:.3f} | "
            f"{ms['plain'] / ms['coop']:.2f} | {flops / ms['coop'] / 1e9:.1f} | "
            f"{'' if torch_ms is None else f'{torch_ms:.3f}'} |"
        )


if __name__ == "__main__":
    main()

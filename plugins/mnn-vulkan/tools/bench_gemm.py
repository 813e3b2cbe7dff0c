"""float32 GEMMs on mnn-vulkan's large-block shaders, per shape and variant: GPU ms and TFLOP/s,
against cuBLAS fp32 (TF32 off) through PyTorch where it sees a GPU.

    python plugins/mnn-vulkan/tools/bench_gemm.py [--repeat 20] [--variant warp-auto ...]
        [--shape 2048x3072x768 ...]

Shapes are M x K x N: by default BERT-base's and ViT-S/16's MLP GEMMs at batch 16 (the up
projections with their bias and GELU fused, the down ones with their bias) and 4096^3. A variant
is a set of session options (VARIANTS); --variant picks some. GPU times are medians of the
session's dispatches (Vulkan timestamps, "vulkan.profile": the product and whatever epilogue
dispatches it needs, not the host copies); cuBLAS's are CUDA-event times of the same product
(with its bias and GELU) on tensors already on the GPU. TFLOP/s counts 2*M*N*K. "diff" is
max |out - numpy| / max |numpy| (float64 sums): a variant that computes wrongly shows here.
"""

from __future__ import annotations

import argparse

import numpy as np

import mnn_core as mnn

#: (M, K, N, epilogue): "bias" adds a bias row, "gelu" also applies GELU
SHAPES = [
    (2048, 3072, 768, "bias"),  # BERT-base b16: the MLP's down projection
    (2048, 768, 3072, "gelu"),  # its up projection + GELU
    (3152, 1536, 384, "bias"),  # ViT-S/16 b16: mlp.2
    (3152, 384, 1536, "gelu"),  # mlp.0 + GELU
    (4096, 4096, 4096, "none"),
]
#: name -> session options
VARIANTS = {
    "gemm": {"vulkan.big_gemm": "0"},
    "big-128x128": {"vulkan.big_gemm": "128x128"},
    "big-64x128": {"vulkan.big_gemm": "64x128"},
    "warp-128x128": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp"},
    "warp-128x64": {"vulkan.big_gemm": "128x64", "vulkan.big_gemm_shader": "warp"},
    "warp-64x128": {"vulkan.big_gemm": "64x128", "vulkan.big_gemm_shader": "warp"},
    "warp-auto": {"vulkan.big_gemm": "auto", "vulkan.big_gemm_shader": "warp"},
    "warp-scalar": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_vec": False},
}


def _case(m: int, k: int, n: int, epilogue: str):
    """(graph, feeds, numpy reference) of A (M x K) @ W (K x N) [+ bias [then GELU]]."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype("float32")
    w = (rng.uniform(-1, 1, (k, n)) / np.sqrt(k)).astype("float32")
    bias = rng.uniform(-1, 1, n).astype("float32")
    b = mnn.GraphBuilder()
    x = b.input("a", (m, k))
    y = b.MatMul(x, b.const(w))
    want = a.astype("float64") @ w.astype("float64")
    if epilogue in ("bias", "gelu"):
        y = b.Add(y, b.const(bias))
        want = want + bias
    if epilogue == "gelu":
        from math import erf

        y = b.Gelu(y)
        want = 0.5 * want * (1 + np.vectorize(erf)(want / np.sqrt(2)))
    b.output(y, "y")
    return b.build(), {"a": a}, want


def _gpu_ms(graph, feeds, options: dict, repeat: int):
    """(median GPU ms of the session's dispatches, their shaders, the output)."""
    import mnn_vulkan

    sess = mnn.Session(graph, backend="vulkan", fallback=False, options={"vulkan.profile": True, **options})
    out = sess.run(feeds)["y"]
    names = {pl.node for pl in sess.plan.placements}  # fused nodes ("a+b") included
    times, shaders = [], []
    for _ in range(repeat):
        sess.run(feeds, copy=False)
        runs = [r for seg, r in mnn_vulkan.gpu_times().items() if names & set(mnn_vulkan.segments()[seg].names)]
        times.append(sum(ms for r in runs for _, ms in r))
        shaders = sorted({name.split(":")[-1] for r in runs for name, _ in r})
    return float(np.median(times)), shaders, out


def _cublas_ms(m: int, k: int, n: int, epilogue: str, repeat: int):
    """cuBLAS fp32 (TF32 off) on the same product and epilogue, or None without a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, device="cuda")
    w = torch.randn(k, n, device="cuda")
    bias = torch.randn(n, device="cuda")

    def step():
        if epilogue == "none":
            return a @ w
        y = torch.addmm(bias, a, w)
        return torch.nn.functional.gelu(y) if epilogue == "gelu" else y

    times = []
    for i in range(repeat + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return float(np.median(times))


def _parse_shape(text: str):
    m, k, n, *rest = text.split("x")
    return int(m), int(k), int(n), (rest[0] if rest else "none")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="default: all")
    parser.add_argument("--shape", action="append", type=_parse_shape, help="MxKxN[xbias|xgelu]; default: SHAPES")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    print("| M x K x N | epilogue | variant | GPU ms | TFLOP/s | shaders | diff |")
    print("|---|---|---|---:|---:|---|---:|")
    for m, k, n, epilogue in args.shape or SHAPES:
        graph, feeds, want = _case(m, k, n, epilogue)
        flops = 2.0 * m * n * k
        shape = f"{m}x{k}x{n}"
        for name in variants:
            try:
                ms, shaders, out = _gpu_ms(graph, feeds, VARIANTS[name], args.repeat)
            except Exception as exc:  # one variant's failure is reported, not fatal
                print(f"| {shape} | {epilogue} | {name} | FAILED {type(exc).__name__}: {exc} | | | |", flush=True)
                continue
            diff = f"{float(np.abs(out - want).max() / np.abs(want).max()):.1e}"
            print(
                f"| {shape} | {epilogue} | {name} | {ms:.3f} | {flops / ms / 1e9:.1f} | {','.join(shaders)} | {diff} |",
                flush=True,
            )
        torch_ms = _cublas_ms(m, k, n, epilogue, args.repeat)
        if torch_ms is not None:
            print(f"| {shape} | {epilogue} | cuBLAS fp32 | {torch_ms:.3f} | {flops / torch_ms / 1e9:.1f} | torch | |")


if __name__ == "__main__":
    main()

"""float32 GEMMs on mnn-vulkan's large-block shaders, per shape and variant: GPU ms and TFLOP/s,
against cuBLAS fp32 (TF32 off) through PyTorch where it sees a GPU; then ResNet-50's 3x3
convolutions at batch 16 on conv2d.comp and conv_warp.comp, against cuDNN fp32 (TF32 off).

    python plugins/mnn-vulkan/tools/bench_gemm.py [--repeat 20] [--variant warp-auto ...]
        [--shape 2048x3072x768 ...] [--conv-variant conv-warp-auto ...] [--no-conv] [--narrow] [--dw]

Shapes are M x K x N: by default BERT-base's and ViT-S/16's MLP GEMMs at batch 16 (the up
projections with their bias and GELU fused, the down ones with their bias) and 4096^3; --narrow
takes NARROW_SHAPES instead (ConvNeXt-T's MLP down projections at batch 16, 96 and 192 wide). A variant
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
#: outputs that 128x128 blocks pad (kernels/gemm_narrow.py): ConvNeXt-T b16's stage-1 and stage-2 MLP down
#: projections, and a 64-row output (a 1x1 convolution to 64 channels)
NARROW_SHAPES = [(50176, 384, 96, "bias"), (12544, 768, 192, "bias"), (64, 256, 50176, "bias")]
#: name -> session options
VARIANTS = {
    "default": {},  # gemm_warp.comp's 128x128 blocks where they fill the GPU, K slices of 8 up to K = 576
    "gemm": {"vulkan.big_gemm": "0"},
    "big-128x128": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "big"},
    "big-64x128": {"vulkan.big_gemm": "64x128", "vulkan.big_gemm_shader": "big"},
    "warp-128x128": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_bk": 16},
    "warp-128x64": {"vulkan.big_gemm": "128x64", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_bk": 16},
    "warp-64x128": {"vulkan.big_gemm": "64x128", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_bk": 16},
    "warp-auto": {"vulkan.big_gemm": "auto", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_bk": 16},
    "warp-split2": {
        "vulkan.big_gemm": "128x128",
        "vulkan.big_gemm_shader": "warp",
        "vulkan.big_gemm_splitk": 2,
        "vulkan.big_gemm_bk": 16,
    },
    "warp-split3": {
        "vulkan.big_gemm": "128x128",
        "vulkan.big_gemm_shader": "warp",
        "vulkan.big_gemm_splitk": 3,
        "vulkan.big_gemm_bk": 16,
    },
    "warp-bk8": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_bk": 8},
    "warp-split4": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp", "vulkan.big_gemm_splitk": 4},
    "warp-fill": {"vulkan.warp_splitk": "auto"},  # gemm_split.warp_fill_plan's slices where it takes the GEMM
    # gemm_warp_wide.comp: 8x16 outputs per invocation (4 warps on 128x128, 8 on 256x128 and 128x256)
    "wide-128x128": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp-wide", "vulkan.big_gemm_bk": 16},
    "wide-128x128-bk8": {"vulkan.big_gemm": "128x128", "vulkan.big_gemm_shader": "warp-wide", "vulkan.big_gemm_bk": 8},
    "wide-256x128": {"vulkan.big_gemm": "256x128", "vulkan.big_gemm_shader": "warp-wide"},
    "wide-128x256": {"vulkan.big_gemm": "128x256", "vulkan.big_gemm_shader": "warp-wide"},
    # kernels/gemm_narrow.py's blocks ("vulkan.warp_narrow"): off is the rule before (gemm.comp below 128)
    "narrow-off": {"vulkan.warp_narrow": "0"},
    "narrow-128x96": {"vulkan.warp_narrow": "128x96"},
    "narrow-128x96-bk16": {"vulkan.warp_narrow": "128x96", "vulkan.big_gemm_bk": 16},
    "narrow-128x192": {"vulkan.warp_narrow": "128x192"},
    "narrow-128x128": {"vulkan.warp_narrow": "128x128"},
    "narrow-128x64": {"vulkan.warp_narrow": "128x64"},
    "warp-scalar": {
        "vulkan.big_gemm": "128x128",
        "vulkan.big_gemm_shader": "warp",
        "vulkan.big_gemm_vec": False,
        "vulkan.big_gemm_bk": 16,
    },
}


#: ResNet-50's 3x3 convolutions at batch 16 (stride 1, padding 1; bias and ReLU fused):
#: (n, c, h, w, o)
CONVS = [(16, 64, 56, 56, 64), (16, 128, 28, 28, 128), (16, 256, 14, 14, 256), (16, 512, 7, 7, 512)]
CONV_VARIANTS = {
    "conv2d": {"vulkan.conv_warp": "0"},
    "conv-default": {},  # conv_warp.comp (64x128, K slices of 8) for 3x3s of <= 64 channels at 1.5 waves
    "conv-warp-auto": {"vulkan.conv_warp": "auto", "vulkan.big_gemm_bk": 16},
    "conv-warp-128x128": {"vulkan.conv_warp": "128x128", "vulkan.big_gemm_bk": 16},
    "conv-warp-128x64": {"vulkan.conv_warp": "128x64", "vulkan.big_gemm_bk": 16},
    "conv-warp-64x128": {"vulkan.conv_warp": "64x128", "vulkan.big_gemm_bk": 16},
    "conv-warp-bk8": {"vulkan.conv_warp": "auto", "vulkan.big_gemm_bk": 8},
}
# forced K slices ("vulkan.splitk") on conv_warp.comp's blocks: which count fills the GPU's slots best
for _block in ("128x128", "64x128", "128x64"):
    for _splits in (2, 4, 6, 8):
        CONV_VARIANTS[f"conv-warp-{_block}-s{_splits}"] = {
            "vulkan.conv_warp": _block,
            "vulkan.splitk": _splits,
            "vulkan.big_gemm_bk": 16,
        }
# "auto" with K split until the blocks give that many work groups per SM ("vulkan.conv_warp_fill")
for _fill in (3, 6):
    CONV_VARIANTS[f"conv-warp-fill{_fill}"] = {"vulkan.conv_warp": "auto", "vulkan.conv_warp_fill": _fill}
    CONV_VARIANTS[f"conv-warp-fill{_fill}-bk16"] = CONV_VARIANTS[f"conv-warp-fill{_fill}"] | {"vulkan.big_gemm_bk": 16}
#: ConvNeXt-T's depthwise 7x7 convolutions at batch 16 (padding 3, bias): (n, c, h, w)
DW_CONVS = [(16, 96, 56, 56), (16, 192, 28, 28), (16, 384, 14, 14), (16, 768, 7, 7)]
DW_VARIANTS = {"conv_dw": {"vulkan.dw_strip": "0"}, "conv_dw7": {"vulkan.dw_strip": "1"}}


def _conv_case(n: int, c: int, h: int, w: int, o: int):
    """(graph, feeds, weights, bias) of Relu(Conv 3x3, padding 1, with bias)."""
    rng = np.random.default_rng(0)
    wt = (rng.uniform(-1, 1, (o, c, 3, 3)) / np.sqrt(9 * c)).astype("float32")
    bias = rng.uniform(-1, 1, o).astype("float32")
    b = mnn.GraphBuilder()
    x = b.input("a", (n, c, h, w))
    b.output(b.Relu(b.Conv(x, b.const(wt), b.const(bias), pads=[1, 1, 1, 1])), "y")
    return b.build(), {"a": rng.uniform(-1, 1, (n, c, h, w)).astype("float32")}, wt, bias


def _dw_case(n: int, c: int, h: int, w: int):
    """(graph, feeds, weights, bias) of a depthwise 7x7 Conv, padding 3, with bias."""
    rng = np.random.default_rng(0)
    wt = (rng.uniform(-1, 1, (c, 1, 7, 7)) / 7).astype("float32")
    bias = rng.uniform(-1, 1, c).astype("float32")
    b = mnn.GraphBuilder()
    x = b.input("a", (n, c, h, w))
    b.output(b.Conv(x, b.const(wt), b.const(bias), pads=[3, 3, 3, 3], group=c), "y")
    return b.build(), {"a": rng.uniform(-1, 1, (n, c, h, w)).astype("float32")}, wt, bias


def _dw_convs(repeat: int) -> None:
    print("\n| depthwise 7x7 (n, c, h, w) | variant | GPU ms | GB/s (in + out) | shaders | diff to conv_dw |")
    print("|---|---|---:|---:|---|---:|")
    for n, c, h, w in DW_CONVS:
        graph, feeds, wt, bias = _dw_case(n, c, h, w)
        nbytes = 2 * 4 * n * c * h * w
        shape = f"{n}x{c}x{h}x{w}"
        base = None
        for name, options in DW_VARIANTS.items():
            try:
                ms, shaders, out = _gpu_ms(graph, feeds, options, repeat)
            except Exception as exc:  # one variant's failure is reported, not fatal
                print(f"| {shape} | {name} | FAILED {type(exc).__name__}: {exc} | | | |", flush=True)
                continue
            base = out if base is None else base
            diff = float(np.abs(out - base).max() / np.abs(base).max())
            print(f"| {shape} | {name} | {ms:.3f} | {nbytes / ms / 1e6:.0f} | {','.join(shaders)} | {diff:.1e} |")
        found = _cudnn(feeds, wt, bias, repeat, relu=False, pad=3, groups=c)
        if found is not None:
            ms, out = found
            diff = "" if base is None else f"{float(np.abs(out - base).max() / np.abs(base).max()):.1e}"
            print(f"| {shape} | cuDNN fp32 | {ms:.3f} | {nbytes / ms / 1e6:.0f} | torch | {diff} |", flush=True)


def _cudnn(feeds, wt, bias, repeat: int, relu: bool = True, pad: int = 1, groups: int = 1):
    """(cuDNN fp32 ms with TF32 off, its output) for [Relu](Conv), or None without a CUDA GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cudnn.allow_tf32 = False
    x = torch.from_numpy(feeds["a"]).cuda()
    w, b = torch.from_numpy(wt).cuda(), torch.from_numpy(bias).cuda()
    times = []
    for i in range(repeat + 3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y = torch.nn.functional.conv2d(x, w, b, padding=pad, groups=groups)
        y = torch.relu(y) if relu else y
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end))
    return float(np.median(times)), y.cpu().numpy()


def _convs(variants: list, repeat: int) -> None:
    print("\n| conv 3x3 (n, c, h, w, o) | variant | GPU ms | TFLOP/s | shaders | diff to conv2d |")
    print("|---|---|---:|---:|---|---:|")
    for n, c, h, w, o in CONVS:
        graph, feeds, wt, bias = _conv_case(n, c, h, w, o)
        flops = 2.0 * n * o * h * w * c * 9
        shape = f"{n}x{c}x{h}x{w} -> {o}"
        base = None
        for name in variants:
            try:
                ms, shaders, out = _gpu_ms(graph, feeds, CONV_VARIANTS[name], repeat)
            except Exception as exc:  # one variant's failure is reported, not fatal
                print(f"| {shape} | {name} | FAILED {type(exc).__name__}: {exc} | | | |", flush=True)
                continue
            base = out if base is None else base
            diff = float(np.abs(out - base).max() / np.abs(base).max())
            print(f"| {shape} | {name} | {ms:.3f} | {flops / ms / 1e9:.1f} | {','.join(shaders)} | {diff:.1e} |")
        found = _cudnn(feeds, wt, bias, repeat)
        if found is not None:
            ms, out = found
            diff = "" if base is None else f"{float(np.abs(out - base).max() / np.abs(base).max()):.1e}"
            print(f"| {shape} | cuDNN fp32 | {ms:.3f} | {flops / ms / 1e9:.1f} | torch | {diff} |", flush=True)


def _erf(v: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf
    except ImportError:  # math.erf per element: seconds for the largest shapes
        from math import erf

        return np.vectorize(erf)(v)
    return erf(v)


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
        y = b.Gelu(y)
        want = 0.5 * want * (1 + _erf(want / np.sqrt(2)))
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
    parser.add_argument("--conv-variant", action="append", choices=sorted(CONV_VARIANTS), help="default: all")
    parser.add_argument("--no-conv", action="store_true", help="GEMMs only")
    parser.add_argument("--narrow", action="store_true", help="NARROW_SHAPES instead of SHAPES")
    parser.add_argument("--dw", action="store_true", help="also ConvNeXt-T's depthwise 7x7s (DW_CONVS)")
    parser.add_argument("--no-gemm", action="store_true", help="no GEMMs")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    print("| M x K x N | epilogue | variant | GPU ms | TFLOP/s | shaders | diff |")
    print("|---|---|---|---:|---:|---|---:|")
    for m, k, n, epilogue in [] if args.no_gemm else args.shape or (NARROW_SHAPES if args.narrow else SHAPES):
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
    if args.dw:
        _dw_convs(args.repeat)
    if not args.no_conv:
        _convs(args.conv_variant or list(CONV_VARIANTS), args.repeat)


if __name__ == "__main__":
    main()

"""Executed aarch64 instructions per MobileNetV2 (ResNet-18, SqueezeNet 1.1) convolution layer, per kernel
path, counted under qemu-user (no timing: emulation says nothing about time).

    python plugins/mnn-arm/tools/count_insns.py [--cpu max] [--size 224] [--paths fp32,fp16h,int8_dot]
    python plugins/mnn-arm/tools/count_insns.py --net resnet18 --paths fp32_im2col,fp32
    python plugins/mnn-arm/tools/count_insns.py --net squeezenet1_1 --paths fp32,fp32_im2col --cpu neoverse-n1

Paths: fp32 (Winograd F(2x2, 3x3) where Session's auto rule takes it), fp32_im2col (the fp32 path with
option arm.winograd off: 3x3 convolutions as im2col + GEMM), fp32_winograd (arm.winograd on: wherever it
applies), fp16 (fp16 arithmetic on fp32 tensors:
converting in, widening out), fp16h (what precision="low" runs: fp16 arithmetic on fp16 activations,
the network's input converted at the stem), int8 (no sdot), int8_dot.

Cross-compiles tools/count_layers.c with the kernel objects (each path with its
own flags), runs it under `qemu-aarch64-static -d in_asm,exec,nochain` (Debian's
static qemu-user loads no TCG plugins), and adds up the instructions of every
translation block executed between count_begin() and count_end() of each layer.
Logging is limited (-dfilter) to the linked mnn-arm code, so the few calls into
libc (memset/memcpy of padding) are not counted. Layers of the same shape give
the same count, so each distinct shape runs once and counts for all of its uses.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
PLUGIN = TOOLS.parent


def mobilenet_v2_convs(size: int = 224) -> list[tuple[int, ...]]:
    """(C, H, W, O, k, stride, pad, group) of every conv of examples/build_models.py's MobileNetV2."""
    layers, h = [(3, size, size, 32, 3, 2, 1, 1)], (size - 1) // 2 + 1
    cin = 32
    for t, c, n, s in [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            if t != 1:
                layers.append((cin, h, h, hidden, 1, 1, 0, 1))
            layers.append((hidden, h, h, hidden, 3, stride, 1, hidden))
            h = (h - 1) // stride + 1
            layers.append((hidden, h, h, c, 1, 1, 0, 1))
            cin = c
    layers.append((cin, h, h, 1280, 1, 1, 0, 1))
    return layers


def resnet18_convs(size: int = 224) -> list[tuple[int, ...]]:
    """(C, H, W, O, k, stride, pad, group) of the 3x3 convolutions of examples/build_models.py's ResNet-18
    (the 7x7 stem and the 1x1 shortcuts left out: Winograd does not touch them)."""
    layers, h, cin = [], (size - 1) // 4 + 1, 64  # after the stride-2 stem and the stride-2 max pool
    for c, s in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for i in range(2):
            stride = s if i == 0 else 1
            layers.append((cin, h, h, c, 3, stride, 1, 1))
            h = (h - 1) // stride + 1
            layers.append((c, h, h, c, 3, 1, 1, 1))
            cin = c
    return layers


def squeezenet1_1_convs(size: int = 224) -> list[tuple[int, ...]]:
    """(C, H, W, O, k, stride, pad, group) of every conv of examples/build_models.py's SqueezeNet 1.1: the
    stride-2 stem, each fire module's squeeze 1x1 and expand 1x1 / 3x3, the 1x1 classifier."""
    h = (size - 3) // 2 + 1
    layers, cin = [(3, size, size, 64, 3, 2, 0, 1)], 64
    for pool_before, fires in [
        (True, [(16, 64), (16, 64)]),
        (True, [(32, 128), (32, 128)]),
        (True, [(48, 192), (48, 192), (64, 256), (64, 256)]),
    ]:
        if pool_before:
            h = -(-(h - 3) // 2) + 1  # 3x3 stride-2 max pool, ceil_mode
        for squeeze, expand in fires:
            layers += [(cin, h, h, squeeze, 1, 1, 0, 1), (squeeze, h, h, expand, 1, 1, 0, 1)]
            layers.append((squeeze, h, h, expand, 3, 1, 1, 1))
            cin = 2 * expand
    return layers + [(cin, h, h, 1000, 1, 1, 0, 1)]


NETS = {
    "mobilenet_v2": ("MobileNetV2", mobilenet_v2_convs),
    "resnet18": ("ResNet-18 (3x3 layers)", resnet18_convs),
    "squeezenet1_1": ("SqueezeNet 1.1", squeezenet1_1_convs),
}


def build(out: Path) -> tuple[Path, str]:
    """The subject binary, and the -dfilter range that covers mnn-arm's code (bracketed by two empty functions)."""
    subprocess.run(["bash", str(PLUGIN / "tests/harness/build.sh"), str(out)], check=True, capture_output=True)
    objs = [str(p) for p in sorted(out.glob("*.o")) if p.name != "harness.o"]
    csrc = PLUGIN / "mnn_arm" / "csrc"
    core = PLUGIN.parent.parent / "mnn_core" / "include"
    cc = ["aarch64-linux-gnu-gcc", "-O2", "-march=armv8-a", f"-I{csrc}", f"-I{core}", "-c"]
    # the op layer's run functions (what Session calls), built like setup.py builds them (-O3)
    subprocess.run(cc + ["-O3", str(csrc / "ops.c"), "-o", str(out / "ops.o")], check=True)
    subprocess.run(cc + ["-O3", str(csrc / "threads.c"), "-o", str(out / "threads.o")], check=True)
    subprocess.run(cc + [str(TOOLS / "count_layers.c"), "-o", str(out / "count_layers.o")], check=True)
    for mark in ("begin", "end"):
        (out / f"mark_{mark}.c").write_text(f"void mnn_text_{mark}(void) {{}}\n")
        subprocess.run(cc + [str(out / f"mark_{mark}.c"), "-o", str(out / f"mark_{mark}.o")], check=True)
    exe = out / "count_layers"
    subprocess.run(
        [
            "aarch64-linux-gnu-gcc",
            "-static",
            str(out / "mark_begin.o"),
            *objs,
            str(out / "ops.o"),
            str(out / "threads.o"),
            str(out / "count_layers.o"),
            str(out / "mark_end.o"),
            "-lm",
            "-o",
            str(exe),
        ],
        check=True,
    )
    syms = subprocess.run(["aarch64-linux-gnu-nm", str(exe)], capture_output=True, text=True, check=True).stdout
    marks = [line.split() for line in syms.splitlines() if line.endswith(("_text_begin", "_text_end"))]
    addr = {name: value for value, _, name in marks}
    return exe, f"0x{addr['mnn_text_begin']}..0x{addr['mnn_text_end']}"


def count(exe: Path, dfilter: str, path: str, layers, cpu: str) -> list[int]:
    """Instructions executed between count_begin and count_end, per layer."""
    text = "".join(" ".join(map(str, layer)) + "\n" for layer in layers)
    proc = subprocess.Popen(
        [
            "qemu-aarch64-static",
            "-cpu",
            cpu,
            "-d",
            "in_asm,exec,nochain",
            "-dfilter",
            dfilter,
            "-D",
            "/dev/stderr",
            str(exe),
            path,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1 << 20,
    )
    proc.stdin.write(text)
    proc.stdin.close()
    sizes: dict[int, int] = {}
    counts: list[int] = []
    block_pc, block_n, active = None, 0, False
    insn = re.compile(r"^0x([0-9a-f]+):\s")
    for line in proc.stderr:
        if line.startswith("Trace"):  # Trace N: host [cs_base/pc/flags/cflags] symbol
            if line.endswith("count_begin\n"):
                active = True
                counts.append(0)
            elif line.endswith("count_end\n"):
                active = False
            elif active:
                counts[-1] += sizes.get(int(line.split("/", 2)[1], 16), 0)
        elif line.startswith("IN:"):
            block_pc, block_n = None, 0
        elif line.startswith("0x"):
            m = insn.match(line)
            if m:
                if block_pc is None:
                    block_pc = int(m.group(1), 16)
                block_n += 1
                sizes[block_pc] = block_n
    proc.wait()
    if proc.returncode:
        sys.exit(f"count_layers {path} failed under -cpu {cpu} (rc {proc.returncode})")
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--paths", default="fp32,fp16h,int8_dot,fp16,int8")
    ap.add_argument("--net", default="mobilenet_v2", choices=sorted(NETS))
    args = ap.parse_args()
    title, convs = NETS[args.net]
    layers = convs(args.size)
    unique = sorted(set(layers), key=layers.index)
    with tempfile.TemporaryDirectory() as tmp:
        exe, dfilter = build(Path(tmp))
        results = {}
        for p in args.paths.split(","):
            per_shape = dict(zip(unique, count(exe, dfilter, p, unique, args.cpu)))
            results[p] = [per_shape[layer] for layer in layers]
            print(f"{p}: {sum(results[p]):,} instructions", file=sys.stderr, flush=True)
    paths = list(results)
    print(
        f"{title} ({args.size}x{args.size}, batch 1) convolution layers, executed instructions "
        f"(qemu -cpu {args.cpu}), ratio to {paths[0]}"
    )
    print(
        "| # | layer (C,H,W -> O, k, s, group) | MMACs | "
        + " | ".join(paths)
        + " | "
        + " | ".join(f"{p}/{paths[0]}" for p in paths[1:])
        + " |"
    )
    print("|---" * (3 + 2 * len(paths) - 1) + "|")
    totals = dict.fromkeys(paths, 0)
    for i, (c, h, w, o, k, s, p, g) in enumerate(layers):
        oh = (h + 2 * p - k) // s + 1
        macs = o * oh * oh * (c // g) * k * k
        row = [results[q][i] for q in paths]
        for q, v in zip(paths, row):
            totals[q] += v
        kind = "dw" if g == c and g > 1 else f"{k}x{k}"
        print(
            f"| {i} | {c},{h},{w} -> {o}, {kind}, s{s} | {macs / 1e6:.1f} | "
            + " | ".join(f"{v:,}" for v in row)
            + " | "
            + " | ".join(f"{v / row[0]:.2f}" for v in row[1:])
            + " |"
        )
    print(
        f"| all | {len(layers)} layers | | "
        + " | ".join(f"{totals[q]:,}" for q in paths)
        + " | "
        + " | ".join(f"{totals[q] / totals[paths[0]]:.2f}" for q in paths[1:])
        + " |"
    )
    print()
    print("| layers | " + " | ".join(paths) + " | " + " | ".join(f"{p}/{paths[0]}" for p in paths[1:]) + " |")
    print("|---" * (2 * len(paths)) + "|")
    kinds = {}
    for i, (c, _, _, _, k, _, _, g) in enumerate(layers):
        gemm = "pointwise 1x1 (GEMM)" if k == 1 else f"{k}x{k} s{layers[i][5]}"
        kind = "depthwise 3x3" if g == c and g > 1 else gemm
        kinds.setdefault(kind, []).append(i)
    for kind, idx in kinds.items():
        sums = [sum(results[q][i] for i in idx) for q in paths]
        print(
            f"| {len(idx)} {kind} | "
            + " | ".join(f"{v:,}" for v in sums)
            + " | "
            + " | ".join(f"{v / sums[0]:.2f}" for v in sums[1:])
            + " |"
        )


if __name__ == "__main__":
    main()

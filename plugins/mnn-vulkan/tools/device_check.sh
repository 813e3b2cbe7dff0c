#!/usr/bin/env bash
# mnn-vulkan's start-up and batch-1 GEMM choices on an NVIDIA GPU, in about 3 minutes, after
#
#   PLUGINS="vulkan" bash benchmarks/h200_gpu.sh setup      # installs mnn-core, mnn-vulkan
#   bash plugins/mnn-vulkan/tools/device_check.sh           # from the repository root
#
# Logs go to $OUT (default /tmp/mnn-vulkan-check), one line per result to $OUT/summary.txt. Each
# stage has a time limit; a stage that fails or runs out is noted and the next one runs.
#   exports  the zoo's ONNX files (small sizes for start-up, full for latency), in the background
#            while the tests run (a fresh machine has none; torch exports them on the CPU)
#   tests    test_startup.py, test_pipeline_cache.py, test_gemm_split.py, test_tiling.py, test_gemm_big.py,
#            test_gemm_warp.py, test_conv_warp.py, test_gemm_narrow.py, test_conv_dw7.py, test_copy_tile.py
#   gemm     tools/bench_gemm.py: GPU ms and TFLOP/s of BERT-base's and ViT-S/16's batch-16 MLP GEMMs and
#            4096^3 on the default (gemm_warp.comp's 128x128 blocks, K slices of 8 up to K = 576), gemm.comp,
#            gemm_big.comp, gemm_warp.comp (128x128 in K slices of 16 and of 8) and gemm_warp_wide.comp (8x16
#            per invocation: 128x128 in slices of 16 and 8, 256x128, 128x256) against cuBLAS fp32 (TF32 off);
#            ResNet-50's 3x3 convolutions at batch 16 on conv2d.comp, the default and conv_warp.comp (128x128,
#            auto in K slices of 8) against cuDNN fp32
#   narrow   tools/bench_gemm.py --narrow: outputs that 128x128 blocks pad (ConvNeXt-T b16's 96- and
#            192-wide MLP down projections, a 64-row output) on the default (kernels/gemm_narrow.py), the rule
#            before (vulkan.warp_narrow=0: gemm.comp below 128), and each block forced
#   startup  benchmarks/bench_startup.py, cold then warm, for resnet-50, vit-s16, bert-base and
#            convnext-t; then tools/profile_startup.py's phases of resnet-50's warm start
#   bench    benchmarks/bench_gpu.py --batch 1, mnn-vulkan against PyTorch eager, the same models
#   sweep    tools/sweep_tiling.py --batch 1: split-K GEMMs (the default) against whole ones
#            (vulkan.gemm_splitk=0), slices of >= 256 of K (vulkan.splitk_min=256, the default before
#            128; ResNet-50's convolutions are split by the same rule) and batch dims kept
#            apart from rows (vulkan.fold_batch=0: ConvNeXt's MLPs unsplit), and GEMMs whose blocks
#            give 132 work groups kept whole (vulkan.splitk_whole_at=132: fewer sums), GPU ms by shader
#   sweep16  tools/sweep_tiling.py --batch 16: the default (gemm_warp.comp's 128x128 blocks where they
#            fill the GPU, K slices of 8 up to K = 576; conv_warp.comp for 3x3s of <= 64 channels) against
#            gemm_big.comp in its place (vulkan.big_gemm_shader=big, the default before), conv2d.comp for
#            every convolution (vulkan.conv_warp=0), K slices of 16 throughout (vulkan.big_gemm_bk=16) and
#            the half-size blocks' rule (vulkan.big_gemm=auto), gemm_warp_wide.comp's 128x128 blocks
#            (vulkan.big_gemm_shader=warp-wide), GPU ms by shader; SWEEP16_CONFIGS replaces the list, e.g.
#            "default= narrow-off=vulkan.warp_narrow=0 dw-off=vulkan.dw_strip=0" (the narrow GEMM blocks' rule
#            off, conv_dw.comp for the depthwise 7x7s)
#   bench16  benchmarks/bench_gpu.py --batch 16, mnn-vulkan (the default) against PyTorch eager
#   copies   tools/profile_vulkan.py --split at batch 16 (resnet-50: 9.6 MB in; bert-base: 6.3 MB out): where a
#            run's time goes besides the dispatches (host side, memcpy, copy submits, fence waits), for the
#            copies in C (default: uploads in 2 MiB chunks, downloads in one DMA, memcpy over 4 threads), as
#            before (MNN_VULKAN_RUN_COPIES=python, MNN_VULKAN_COPY_CHUNK=33554432, one thread), on 1 and 8
#            threads, and 2 MiB download chunks; the device's memory types; PyTorch's pageable copies of the
#            same bytes; first tests/test_run_copies.py (the copies bit for bit, threads, forks, no allocation)
# MODELS overrides the model list, STAGES (default: all of the above) what runs, e.g.
#   MODELS="resnet-50" STAGES="tests startup" bash plugins/mnn-vulkan/tools/device_check.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-/tmp/mnn-vulkan-check}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
MODELS=${MODELS:-resnet-50 vit-s16 bert-base convnext-t}
STAGES=" ${STAGES:-exports tests gemm narrow startup bench sweep sweep16 bench16 copies} "
export PYTHONUNBUFFERED=1
wants() { [[ "$STAGES" == *" $1 "* ]]; }
say() { echo "== $*" | tee -a "$OUT/summary.txt"; }
T0=$SECONDS

# as benchmarks/h200_gpu.sh: NVIDIA's ICD where the loader does not find it by itself
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$NVIDIA_ICD" ] && ! (cd /tmp && $PY -c "
from mnn_vulkan import device; import sys; sys.exit(0 if device.choose(None).type == 'discrete' else 1)") 2>/dev/null; then
    export VK_DRIVER_FILES=$NVIDIA_ICD VK_ICD_FILENAMES=$NVIDIA_ICD
fi
say "mnn-vulkan device check, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null), models: $MODELS"
say "device: $(cd /tmp && $PY -c 'from mnn_vulkan import device; d = device.choose(None); print(d.name, d.type)' 2>&1 | tail -n 1)"

if wants exports; then
    (cd /tmp && timeout ${EXPORT_LIMIT:-150} $PY - $MODELS >"$OUT/exports.log" 2>&1 <<EOF
import sys, time
sys.path.insert(0, "$ROOT/benchmarks")
sys.path.insert(0, "$ROOT/plugins/mnn-vulkan/tools")
from bench_startup import model_path
from zoo_inputs import zoo_model
for name in sys.argv[1:]:
    t0 = time.perf_counter()
    model_path(name, "legacy")  # the small size, as bench_startup.py takes it
    zoo_model(name, 1)  # the full size at batch 1, as bench_gpu.py and sweep_tiling.py take it
    print(f"exported {name} in {time.perf_counter() - t0:.1f} s", flush=True)
EOF
    ) &
    EXPORTS=$!
fi

if wants tests; then
    t0=$SECONDS
    (cd /tmp && timeout ${TEST_LIMIT:-180} $PY -m pytest -q -rfs -p no:cacheprovider --tb=short \
        "$ROOT/plugins/mnn-vulkan/tests/test_startup.py" "$ROOT/plugins/mnn-vulkan/tests/test_pipeline_cache.py" \
        "$ROOT/plugins/mnn-vulkan/tests/test_gemm_split.py" "$ROOT/plugins/mnn-vulkan/tests/test_tiling.py" \
        "$ROOT/plugins/mnn-vulkan/tests/test_gemm_big.py" "$ROOT/plugins/mnn-vulkan/tests/test_gemm_warp.py" \
        "$ROOT/plugins/mnn-vulkan/tests/test_conv_warp.py" "$ROOT/plugins/mnn-vulkan/tests/test_gemm_narrow.py" \
        "$ROOT/plugins/mnn-vulkan/tests/test_conv_dw7.py" "$ROOT/plugins/mnn-vulkan/tests/test_copy_tile.py" \
        >"$OUT/pytest.log" 2>&1)
    say "tests ($((SECONDS - t0)) s): $(grep -E '(passed|failed|error)' "$OUT/pytest.log" | tail -n 1)"
    grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -n 10 | tee -a "$OUT/summary.txt"
fi

if wants gemm; then
    t0=$SECONDS
    (cd /tmp && timeout ${GEMM_LIMIT:-90} $PY "$ROOT/plugins/mnn-vulkan/tools/bench_gemm.py" --repeat 10 \
        $(for v in ${GEMM_VARIANTS:-default gemm big-128x128 warp-128x128 warp-bk8 wide-128x128 wide-128x128-bk8 \
            wide-256x128 wide-128x256}; do echo --variant $v; done) \
        $(for v in ${CONV_VARIANTS:-conv2d conv-default conv-warp-128x128 conv-warp-bk8}; do echo --conv-variant $v; done)) \
        >"$OUT/bench_gemm.log" 2>&1
    say "bench_gemm ($((SECONDS - t0)) s): float32 GEMMs per shader and block, GPU ms and TFLOP/s"
    grep -E '^\| ' "$OUT/bench_gemm.log" | tee -a "$OUT/summary.txt"
fi

if wants narrow; then
    t0=$SECONDS
    (cd /tmp && timeout ${NARROW_LIMIT:-60} $PY "$ROOT/plugins/mnn-vulkan/tools/bench_gemm.py" --repeat 10 --narrow \
        --no-conv $(for v in ${NARROW_VARIANTS:-default narrow-off narrow-128x128 narrow-128x96 narrow-128x96-bk16 \
            narrow-128x192 narrow-128x64 warp-64x128}; do echo --variant $v; done)) >"$OUT/bench_narrow.log" 2>&1
    say "bench_gemm --narrow ($((SECONDS - t0)) s): outputs 128x128 blocks pad, GPU ms and TFLOP/s per block"
    grep -E '^\| ' "$OUT/bench_narrow.log" | tee -a "$OUT/summary.txt"
fi

if [ -n "${EXPORTS:-}" ]; then
    wait "$EXPORTS"
    say "exports (rc $?, done at $((SECONDS - T0)) s): $(tr '\n' ';' <"$OUT/exports.log" | tail -c 300)"
fi

if wants startup; then
    t0=$SECONDS
    (cd /tmp && timeout ${STARTUP_LIMIT:-75} $PY "$ROOT/benchmarks/bench_startup.py" --backend vulkan --set arch \
        $(for m in $MODELS; do echo --model $m; done) --json "$OUT/startup.jsonl") >"$OUT/startup.log" 2>&1
    say "startup ($((SECONDS - t0)) s): warm/cold per model"
    grep -E '^\| vulkan' "$OUT/startup.log" | tee -a "$OUT/summary.txt"
    (cd /tmp && timeout ${PROFILE_LIMIT:-30} $PY "$ROOT/plugins/mnn-vulkan/tools/profile_startup.py" --model resnet-50 \
        --top 25) >"$OUT/profile_startup.log" 2>&1
    say "resnet-50's warm start by phase (cProfile on; profile_startup.log has the rest)"
    grep -E '^(cold|warm):|^ +[0-9.]+ s  ' "$OUT/profile_startup.log" | tee -a "$OUT/summary.txt"
fi

if wants bench; then
    t0=$SECONDS
    (cd /tmp && timeout ${BENCH_LIMIT:-75} $PY "$ROOT/benchmarks/bench_gpu.py" --batch 1 --repeat 20 --warmup 3 \
        --engine vulkan --engine eager $(for m in $MODELS; do echo --model $m; done) \
        --markdown "$OUT/bench_gpu.md") >"$OUT/bench.log" 2>&1
    say "bench_gpu batch 1 ($((SECONDS - t0)) s): ms, mnn-vulkan against PyTorch eager"
    grep -E '^[a-z0-9-]+ \| [0-9]+ \| ' "$OUT/bench.log" | tee -a "$OUT/summary.txt"
fi

# sweep NAME LIMIT BATCH TITLE CONFIG...: sweep_tiling.py over $MODELS, its table and GPU split into the summary
sweep() {
    local name=$1 limit=$2 batch=$3 title=$4 t0=$SECONDS args=() c
    shift 4
    for c in "$@"; do args+=(--config "$c"); done
    (cd /tmp && timeout "$limit" $PY "$ROOT/plugins/mnn-vulkan/tools/sweep_tiling.py" --batch "$batch" --repeat 10 \
        $(for m in $MODELS; do echo --onnx $m; done) "${args[@]}") >"$OUT/$name.log" 2>&1
    say "$name ($((SECONDS - t0)) s): $title"
    grep -E '^\| |GPU ms by shader' "$OUT/$name.log" | tee -a "$OUT/summary.txt"
}
wants sweep && sweep sweep "${SWEEP_LIMIT:-130}" 1 "split-K GEMMs (default) against whole ones, batch dims unfolded" \
    split-k= whole=vulkan.gemm_splitk=0 split-k-256=vulkan.splitk_min=256 unfolded=vulkan.fold_batch=0 \
    whole-at-132=vulkan.splitk_whole_at=132
wants sweep16 && sweep sweep16 "${SWEEP16_LIMIT:-240}" 16 \
    "batch 16, the default against gemm_big.comp, conv2d.comp, K slices of 16, the half-size blocks" \
    ${SWEEP16_CONFIGS:-default= big=vulkan.big_gemm_shader=big conv2d=vulkan.conv_warp=0 bk16=vulkan.big_gemm_bk=16 \
    warp-auto=vulkan.big_gemm=auto wide=vulkan.big_gemm_shader=warp-wide}
if wants bench16; then
    t0=$SECONDS
    (cd /tmp && timeout ${BENCH16_LIMIT:-90} $PY "$ROOT/benchmarks/bench_gpu.py" --batch 16 --repeat 20 --warmup 3 \
        --engine vulkan --engine eager $(for m in $MODELS; do echo --model $m; done) \
        --markdown "$OUT/bench_gpu16.md") >"$OUT/bench16.log" 2>&1
    say "bench_gpu batch 16 ($((SECONDS - t0)) s): ms, mnn-vulkan (the default) against PyTorch eager"
    grep -E '^[a-z0-9-]+ \| [0-9]+ \| ' "$OUT/bench16.log" | tee -a "$OUT/summary.txt"
fi
if wants copies; then
    t0=$SECONDS
    (cd /tmp && timeout ${COPY_TEST_LIMIT:-30} $PY -m pytest -q -rfs -p no:cacheprovider --tb=short \
        "$ROOT/plugins/mnn-vulkan/tests/test_run_copies.py") >"$OUT/pytest_copies.log" 2>&1
    say "copies tests ($((SECONDS - t0)) s): $(grep -E '(passed|failed|error)' "$OUT/pytest_copies.log" | tail -n 1)"
    grep -E "^FAILED|^ERROR" "$OUT/pytest_copies.log" | head -n 10 | tee -a "$OUT/summary.txt"
    : >"$OUT/copies.log"
    # copy_split MODEL NAME [VAR=VALUE...]: profile_vulkan.py --split of MODEL at batch 16 under those variables
    copy_split() {
        local m=$1 name=$2
        shift 2
        (cd /tmp && env "$@" timeout ${COPIES_LIMIT:-12} $PY "$ROOT/plugins/mnn-vulkan/tools/profile_vulkan.py" \
            --onnx "$m" --batch 16 --split --repeat 10) >"$OUT/copies_${m##*/}_$name.log" 2>&1
        { echo "-- $m $name"; cat "$OUT/copies_${m##*/}_$name.log"; } >>"$OUT/copies.log"
    }
    up=${COPY_UP_MODEL:-resnet-50}  # 9.6 MB in
    down=${COPY_DOWN_MODEL:-bert-base}  # 6.3 MB out
    copy_split "$up" default
    copy_split "$up" before MNN_VULKAN_RUN_COPIES=python MNN_VULKAN_COPY_CHUNK=33554432 MNN_VULKAN_COPY_THREADS=1
    copy_split "$up" threads-1 MNN_VULKAN_COPY_THREADS=1
    copy_split "$up" threads-8 MNN_VULKAN_COPY_THREADS=8
    copy_split "$down" default
    copy_split "$down" before MNN_VULKAN_RUN_COPIES=python MNN_VULKAN_COPY_CHUNK=33554432 MNN_VULKAN_COPY_THREADS=1
    copy_split "$down" chunk-2M MNN_VULKAN_COPY_CHUNK=2097152
    (cd /tmp && timeout 20 $PY - >>"$OUT/copies.log" 2>&1 <<'EOF'
import time, numpy as np, torch
for mb, shape in ((9.6, (16, 3, 224, 224)), (6.3, (16, 128, 768))):
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    g = torch.from_numpy(x).cuda()
    up, down = [], []
    for _ in range(23):
        torch.cuda.synchronize(); t0 = time.perf_counter(); torch.from_numpy(x).cuda(); torch.cuda.synchronize()
        up.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter(); g.cpu().numpy(); down.append((time.perf_counter() - t0) * 1e3)
    print(f"torch pageable {mb} MB: to GPU {np.median(up[3:]):.3f} ms, back {np.median(down[3:]):.3f} ms")
EOF
    )
    say "copies ($((SECONDS - t0)) s): batch 16, where a run goes besides the dispatches (copies.log has all)"
    grep -E '^-- |^memory types|^staging buffer|wall, plain|host side|upload step|download step|memcpy|copy commands|fence waits|besides|^torch' \
        "$OUT/copies.log" | tee -a "$OUT/summary.txt"
fi
say "done in $((SECONDS - T0)) s"

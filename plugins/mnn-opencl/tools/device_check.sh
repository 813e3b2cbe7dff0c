#!/usr/bin/env bash
# mnn-opencl's 8x8 register blocks (kernels/gemm8.cl) on an NVIDIA GPU at batch 16, in about 3 minutes, after
#
#   PLUGINS="opencl" bash benchmarks/h200_gpu.sh setup      # installs mnn-core, mnn-opencl
#   bash plugins/mnn-opencl/tools/device_check.sh           # from the repository root
#
# Logs go to $OUT (default /tmp/mnn-opencl-check), one line per result to $OUT/summary.txt. Each
# stage has a time limit; a stage that fails or runs out is noted and the next one runs.
#   exports  the zoo's ONNX files at full size (plugins/mnn-vulkan/tools/zoo_inputs.py's zoo_model), in the
#            background while the tests run (torch exports them on the CPU)
#   tests    test_conv8.py, test_kernels.py, test_copies.py and test_gemm.py's 8x8-block cases on the GPU (NVIDIA's
#            compiler)
#   ab       tools/ab.py --batch 16: whole runs with the 8x8 blocks turned off (opencl.gemm8=off, the kernels
#            before them), on (the default) and with 64x128 blocks wherever 128x128 ones give fewer than 198
#            work-groups (opencl.gemm8_b128_min=198, 1.5 waves of an H100), and with products split along K
#            to 1.5 waves (opencl.gemm8_splitk=fill), and with per-element copies (opencl.copy_tiles=off),
#            interleaved: min/median wall ms and the outputs' difference from the first
#   profile  tools/profile_ops.py --batch 16: device ms per op, per kernel and the slowest launches, default
# BATCH (default 16) sets the batch of ab and profile, MODELS the model list (zoo names or ONNX files),
# STAGES (default: all of the above) what runs, e.g.
#   MODELS="resnet-50" STAGES="tests ab" bash plugins/mnn-opencl/tools/device_check.sh
set -u
cd "$(dirname "$0")/../../.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-/tmp/mnn-opencl-check}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
MODELS=${MODELS:-resnet-50 bert-base vit-s16 convnext-t}
STAGES=" ${STAGES:-exports tests ab profile} "
export PYTHONUNBUFFERED=1
wants() { [[ "$STAGES" == *" $1 "* ]]; }
say() { echo "== $*" | tee -a "$OUT/summary.txt"; }
T0=$SECONDS

say "mnn-opencl device check, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null), models: $MODELS"
say "device: $(cd /tmp && $PY -c 'import mnn_opencl as m; print(m.select_device(None).label)' 2>&1 | tail -n 1)"

if wants exports; then
    (cd /tmp && timeout ${EXPORT_LIMIT:-150} $PY - $MODELS >"$OUT/exports.log" 2>&1 <<EOF
import sys, time
sys.path.insert(0, "$ROOT/plugins/mnn-vulkan/tools")
from zoo_inputs import zoo_model
for name in sys.argv[1:]:
    t0 = time.perf_counter()
    path, _ = zoo_model(name, 1)
    print(f"MODEL {name} {path} ({time.perf_counter() - t0:.1f} s)", flush=True)
EOF
    ) &
    EXPORTS=$!
fi

if wants tests; then
    t0=$SECONDS
    (cd /tmp && timeout ${TEST_LIMIT:-120} $PY -m pytest -q -rfs -p no:cacheprovider --tb=short \
        "$ROOT/plugins/mnn-opencl/tests/test_conv8.py" "$ROOT/plugins/mnn-opencl/tests/test_kernels.py" \
        "$ROOT/plugins/mnn-opencl/tests/test_gemm.py" "$ROOT/plugins/mnn-opencl/tests/test_copies.py" \
        -k "b128 or b64 or n64 or blocks8 or follows or kernel or conv or transpose_add" \
        >"$OUT/pytest.log" 2>&1)
    say "tests ($((SECONDS - t0)) s): $(grep -E '(passed|failed|error)' "$OUT/pytest.log" | tail -n 1)"
    grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -n 10 | tee -a "$OUT/summary.txt"
fi

if [ -n "${EXPORTS:-}" ]; then
    wait "$EXPORTS"
    say "exports (rc $?, done at $((SECONDS - T0)) s): $(grep -c '^MODEL ' "$OUT/exports.log") of $(echo $MODELS | wc -w)"
    grep -v '^MODEL ' "$OUT/exports.log" | tail -n 3 | tee -a "$OUT/summary.txt"
fi
onnx_of() { grep "^MODEL $1 " "$OUT/exports.log" 2>/dev/null | awk '{print $3}'; }
tag_of() { echo "${1//\//_}"; }  # a log name for a model (MODELS may name ONNX files)

if wants ab; then
    for m in $MODELS; do
        path=$(onnx_of "$m")
        [ -z "$path" ] && { say "ab $m: no ONNX file"; continue; }
        t0=$SECONDS
        (cd "$ROOT/plugins/mnn-opencl/tools" && timeout ${AB_LIMIT:-60} $PY ab.py "$path" --batch ${BATCH:-16} --runs 9 \
            --variant before:opencl.gemm8=off --variant blocks8: --variant b64-more:opencl.gemm8_b128_min=198 \
            --variant splitk:opencl.gemm8_splitk=fill --variant copies-off:opencl.copy_tiles=off) \
            >"$OUT/ab_$(tag_of "$m").log" 2>&1
        say "ab $m batch ${BATCH:-16} ($((SECONDS - t0)) s, rc $?): wall ms, 8x8 blocks off, on, 64x128 below 198 groups, split-K, copy_tiles off"
        grep -E '^(variant|before|blocks8|b64-more|splitk|copies-off) ' "$OUT/ab_$(tag_of "$m").log" | tee -a "$OUT/summary.txt"
        tail -n 2 "$OUT/ab_$(tag_of "$m").log" | grep -iE 'error|exception' | tee -a "$OUT/summary.txt"
    done
fi

if wants profile; then
    for m in $MODELS; do
        path=$(onnx_of "$m")
        [ -z "$path" ] && { say "profile $m: no ONNX file"; continue; }
        t0=$SECONDS
        (cd /tmp && timeout ${PROFILE_LIMIT:-30} $PY "$ROOT/plugins/mnn-opencl/tools/profile_ops.py" "$path" \
            --batch ${BATCH:-16} --top 25) >"$OUT/clprof16_$(tag_of "$m").log" 2>&1
        say "profile $m batch ${BATCH:-16} ($((SECONDS - t0)) s): kernels and wall; by kernel"
        grep -E 'ms of kernels|^whole run' "$OUT/clprof16_$(tag_of "$m").log" | tee -a "$OUT/summary.txt"
        awk '/^kernel /{on=1; next} on && NF==0{exit} on' "$OUT/clprof16_$(tag_of "$m").log" | head -n 8 \
            | tee -a "$OUT/summary.txt"
        tail -n 2 "$OUT/clprof16_$(tag_of "$m").log" | grep -iE 'error|exception' | tee -a "$OUT/summary.txt"
    done
fi
say "done in $((SECONDS - T0)) s"

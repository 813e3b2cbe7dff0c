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
#   tests    test_conv8.py, test_kernels.py, test_copies.py, test_dwconv.py, test_run_copies.py and test_gemm.py's
#            8x8-block cases on the GPU (NVIDIA's compiler)
#   ab       tools/ab.py --batch 16: whole runs of the default against the variants VARIANTS names (default:
#            every one of AB below), interleaved: min/median wall ms and the outputs' difference from the first
#   profile  tools/profile_ops.py --batch 16: device ms per op, per kernel and the slowest launches, default
#            (or with PROFILE_OPTIONS, e.g. "opencl.conv4=3x3 opencl.dwconv=tile")
# BATCH (default 16) sets the batch of ab and profile, MODELS the model list (zoo names or ONNX files),
# STAGES (default: all of the above) what runs, e.g.
#   MODELS="resnet-50" STAGES="tests ab" VARIANTS="before conv4" bash plugins/mnn-opencl/tools/device_check.sh
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
# ab's variants, NAME:SETTINGS (tools/ab.py --variant): the 8x8 blocks and conv4 off (the kernels before them),
# 64x128 blocks wherever 128x128 ones give fewer than 198 work-groups (1.5 waves of an H100), products split
# along K to 1.5 waves, per-element copies, conv4.cl's 4x4 tiles for the 3x3s only, not at all (conv8) or
# with K whole, conv2d_c1 for the depthwise convolutions, the host copies in Python, 128x96 blocks for products
# 96 or 192 wide, conv4's 1x1s without the gather table (pw), conv4 split by mnn-vulkan's rule, and conv4, dwconv
# and the C copies all off (the defaults before 2026-12-08 01:20)
declare -A AB=(
    [before]=opencl.gemm8=off,opencl.conv4=off [b64-more]=opencl.gemm8_b128_min=198
    [splitk]=opencl.gemm8_splitk=fill [copies-off]=opencl.copy_tiles=off [conv4-3x3]=opencl.conv4=3x3
    [conv4-off]=opencl.conv4=off [conv4-nosplit]=opencl.conv4=all,opencl.gemm8_slices=1
    [dwconv-off]=opencl.dwconv=off [py-copies]=opencl.run_copies=python [n96]=opencl.gemm8_n96=on
    [pw]=opencl.conv4_pw=on [split-wave]=opencl.conv4_split=wave [old]=opencl.conv4=off,opencl.dwconv=off,opencl.run_copies=python
)
VARIANTS=${VARIANTS:-before b64-more splitk copies-off conv4-3x3 conv4-off dwconv-off py-copies n96 pw split-wave old}

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
        "$ROOT/plugins/mnn-opencl/tests/test_dwconv.py" "$ROOT/plugins/mnn-opencl/tests/test_run_copies.py" \
        -k "b128 or b64 or n64 or blocks8 or follows or kernel or conv or transpose_add or copies" \
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
        args=(--variant default:)
        for v in $VARIANTS; do args+=(--variant "$v:${AB[$v]}"); done
        (cd "$ROOT/plugins/mnn-opencl/tools" && timeout ${AB_LIMIT:-60} $PY ab.py "$path" --batch ${BATCH:-16} \
            --runs ${RUNS:-9} "${args[@]}") >"$OUT/ab_$(tag_of "$m")_b${BATCH:-16}.log" 2>&1
        say "ab $m batch ${BATCH:-16} ($((SECONDS - t0)) s, rc $?): wall ms, default and $VARIANTS"
        grep -E "^(variant|default|${VARIANTS// /|}) " "$OUT/ab_$(tag_of "$m")_b${BATCH:-16}.log" | tee -a "$OUT/summary.txt"
        tail -n 2 "$OUT/ab_$(tag_of "$m")_b${BATCH:-16}.log" | grep -iE 'error|exception' | tee -a "$OUT/summary.txt"
    done
fi

if wants profile; then
    for m in $MODELS; do
        path=$(onnx_of "$m")
        [ -z "$path" ] && { say "profile $m: no ONNX file"; continue; }
        t0=$SECONDS
        popts=()
        for o in ${PROFILE_OPTIONS:-}; do popts+=(--option "$o"); done
        (cd /tmp && timeout ${PROFILE_LIMIT:-30} $PY "$ROOT/plugins/mnn-opencl/tools/profile_ops.py" "$path" \
            --batch ${BATCH:-16} --top 25 ${popts[@]+"${popts[@]}"}) >"$OUT/clprof${BATCH:-16}_$(tag_of "$m")${PROFILE_TAG:-}.log" 2>&1
        say "profile $m batch ${BATCH:-16} ${PROFILE_OPTIONS:-} ($((SECONDS - t0)) s): kernels and wall; by kernel"
        grep -E 'ms of kernels|^GPU span|^whole run' "$OUT/clprof${BATCH:-16}_$(tag_of "$m")${PROFILE_TAG:-}.log" | tee -a "$OUT/summary.txt"
        awk '/^kernel /{on=1; next} on && NF==0{exit} on' "$OUT/clprof${BATCH:-16}_$(tag_of "$m")${PROFILE_TAG:-}.log" | head -n ${PROFILE_ROWS:-8} \
            | tee -a "$OUT/summary.txt"
        tail -n 2 "$OUT/clprof${BATCH:-16}_$(tag_of "$m")${PROFILE_TAG:-}.log" | grep -iE 'error|exception' | tee -a "$OUT/summary.txt"
    done
fi
say "done in $((SECONDS - T0)) s"

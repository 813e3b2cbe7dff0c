#!/usr/bin/env bash
# mnn-vulkan on the NVIDIA H200 machine: install, find the GPU, run the tests,
# the ONNX node suite and the benchmark; everything it learns goes to $OUT.
#
#   bash plugins/mnn-vulkan/tools/h200_check.sh setup test   # ~5 min
#   bash plugins/mnn-vulkan/tools/h200_check.sh onnx         # ~3 min
#   bash plugins/mnn-vulkan/tools/h200_check.sh bench        # ~5 min
#
# (one call per line keeps each under the device's 10-minute command limit;
# with no arguments it runs all four stages in one go.)
#
# Stages: setup (unpack the Vulkan loader, pip install), probe (which Vulkan
# devices the plugin sees; always runs), test (plugins/mnn-vulkan/tests),
# onnx (the ONNX node suite, tools/run_conformance.py), bench
# (tools/bench_vulkan.py: MobileNetV2 and ResNet-18, batch 1 and 16, against
# PyTorch CUDA eager and mnn-x86).
#
# The machine has the NVIDIA driver and its ICD file but no Vulkan loader, no
# network and no glslc: the loader comes as Debian packages carried in .gl/
# (libvulkan1, and vulkan-validationlayers too if you want the Khronos layer
# there), and the SPIR-V is the one committed in the package. Run from the
# repository root. Each stage has a time limit; a failing stage is recorded
# in $OUT/summary.txt and the next one still runs.
set -u
cd "$(dirname "$0")/../../.." || exit 1
OUT=${OUT:-/tmp/mnn-vulkan-h200}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
STAGES=${*:-setup test onnx bench}
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
PY=${PYTHON:-python3}

note() { echo "== $*" | tee -a "$SUMMARY"; }
stage() {  # stage NAME SECONDS COMMAND...: run with a limit, log to $OUT/NAME.log
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    note "$name: exit $rc after $((SECONDS - t0)) s (log: $name.log)"
    tail -n 15 "$OUT/$name.log"
    return $rc
}
wants() { [[ " $STAGES " == *" $1 "* ]]; }

note "mnn-vulkan H200 check, $(date -u '+%Y-%m-%d %H:%M UTC'), stages: $STAGES"
{ uname -a; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; $PY --version; } \
    >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt" | tee -a "$SUMMARY"

if wants setup; then
    if ls .gl/*.deb >/dev/null 2>&1; then
        for f in .gl/*.deb; do dpkg -x "$f" / && echo "unpacked $f"; done >"$OUT/debs.log" 2>&1
        ldconfig
        note "unpacked $(ls .gl/*.deb | wc -l) packages from .gl/"
    else
        note "no .gl/*.deb here: using whatever Vulkan loader the machine has"
    fi
    ldconfig -p | grep -E "libvulkan|libEGL" | tee -a "$SUMMARY"
    stage pip-core-vulkan 300 $PY -m pip install --no-build-isolation --no-deps ./ plugins/mnn-vulkan \
        || note "installing mnn-core + mnn-vulkan FAILED: see pip-core-vulkan.log"
    if [ -d plugins/mnn-x86 ]; then  # for the CPU column of the benchmark; optional
        stage pip-x86 200 $PY -m pip install --no-build-isolation --no-deps plugins/mnn-x86 \
            || note "mnn-x86 did not install: the benchmark skips it"
    fi
fi

# -- probe: what the plugin sees, with the driver found by the loader or by hand --
probe() {
    $PY - <<'EOF'
import json
from mnn_core.plugins import get_plugins
b = get_plugins().backends.get("vulkan")
if b is None:
    print(json.dumps({"available": False, "reason": "mnn-vulkan not loaded: " + str(
        [r.error for r in get_plugins().records if r.name == "vulkan"])}))
else:
    a = b.availability()
    from mnn_vulkan import device
    devs = [{k: d.props[k] for k in ("index", "name", "type", "api_version", "driver_version", "subgroup_size",
                                      "max_shared_bytes", "max_storage_range", "device_local_bytes", "fp16")}
            for d in device.devices()] if a else []
    print(json.dumps({"available": a.available, "reason": a.reason, "devices": devs,
                      "chosen": device.choose(None).name if a else None, "ops": len(b.kernels())}))
EOF
}
P=$(probe 2>"$OUT/probe.err" | tail -n 1)
if ! echo "$P" | grep -q '"discrete"' && [ -f "$NVIDIA_ICD" ]; then
    note "no discrete GPU through the default ICD search (${P:0:200}); retrying with VK_DRIVER_FILES=$NVIDIA_ICD"
    export VK_DRIVER_FILES=$NVIDIA_ICD VK_ICD_FILENAMES=$NVIDIA_ICD
    P=$(probe 2>>"$OUT/probe.err" | tail -n 1)
fi
echo "$P" >"$OUT/probe.json"
note "probe: $P"
if ! echo "$P" | grep -q '"available": true'; then
    note "Vulkan is unavailable; stopping (see probe.err)"
    exit 1
fi
ENVS="VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"

if wants test; then
    stage pytest 420 $PY -m pytest -q -p no:cacheprovider -rs plugins/mnn-vulkan/tests \
        --junitxml "$OUT/pytest.xml" || note "tests FAILED ($ENVS)"
    grep -E "passed|failed" "$OUT/pytest.log" | tail -n 1 | tee -a "$SUMMARY"
fi

if wants onnx; then
    if $PY -c "import onnx" 2>/dev/null; then
        stage onnx 540 $PY plugins/mnn-vulkan/tools/run_conformance.py --jobs 8 --timeout 60 \
            --output "$OUT/CONFORMANCE_vulkan.md" --json "$OUT/conformance_vulkan.json" --quiet \
            || note "ONNX node suite did not finish"
        sed -n '/| backend | passed/,/^$/p' "$OUT/CONFORMANCE_vulkan.md" 2>/dev/null | tee -a "$SUMMARY"
    else
        note "onnx is not installed: no ONNX node suite"
    fi
fi

if wants bench; then
    stage bench 570 $PY plugins/mnn-vulkan/tools/bench_vulkan.py --repeat 30 --warmup 5 --timeout 240 --out "$OUT" \
        || note "benchmark did not finish"
    cat "$OUT/bench_vulkan.md" 2>/dev/null | tee -a "$SUMMARY"
fi
note "done: results in $OUT"

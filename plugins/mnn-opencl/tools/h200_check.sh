#!/usr/bin/env bash
# mnn-opencl on the NVIDIA H200 machine (NVIDIA OpenCL and PoCL visible, no network).
#
#   bash plugins/mnn-opencl/tools/h200_check.sh                    # every stage (5-10 minutes)
#   bash plugins/mnn-opencl/tools/h200_check.sh install devices    # or some: install devices test pocl bench
#
# Under a 10-minute limit per command, run it in two calls on the same (warm) machine:
#   bash plugins/mnn-opencl/tools/h200_check.sh install devices test
#   bash plugins/mnn-opencl/tools/h200_check.sh pocl bench
#
# Stages:
#   install  pip install --no-build-isolation --no-deps ./ plugins/mnn-opencl (mnn-core + mnn-opencl)
#   devices  the OpenCL platforms/devices mnn-opencl sees, fp16 support, nvidia-smi
#   test     the plugin's tests on the default device (GPU first: the H200): conformance in
#            fp32, with the fp16 variant forced, and with split-K convolutions forced; models
#            (MobileNetV2 included), caches, device choice (NVIDIA and PoCL), kernels
#   pocl     the conformance suite again on PoCL (MNN_OPENCL_DEVICE=Portable), if present
#   bench    tools/bench.py: MobileNetV2 and ResNet-18, batch 1 and 16, tuning none/fast,
#            fp32 and precision=low, against PyTorch CUDA eager (same graph, TF32 off),
#            plus first-session start-up with a cold and a warm program cache
# Everything is logged under $OUT (default /tmp/mnn-opencl-h200): summary.txt first.
# PYTHON=... picks the interpreter (default python3).
# Tests run from a neutral folder so the installed packages are imported, not the
# source folders (which hold no compiled modules on a fresh checkout).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
OUT=${OUT:-/tmp/mnn-opencl-h200}
STAGES=" ${*:-all} "
PY=${PYTHON:-python3}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"

say() { echo "== $*" | tee -a "$SUMMARY"; }
stage() { [[ "$STAGES" == *" all "* || "$STAGES" == *" $1 "* ]]; }
run() {  # run NAME TIMEOUT CMD...: log to $OUT/NAME.log, report the exit status and the tail
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    (cd /tmp && timeout "$limit" "$@") > "$OUT/$name.log" 2>&1
    local rc=$?
    say "$name: exit $rc in $((SECONDS - t0)) s (log: $OUT/$name.log)"
    tail -n 25 "$OUT/$name.log" | sed 's/^/   | /' | tee -a "$SUMMARY"
    return $rc
}

say "mnn-opencl H200 check, $(date -u +%FT%TZ), stages:$STAGES, repo $ROOT"
say "$($PY --version 2>&1), $(uname -m), $(nproc) cores"

if stage install; then
    run install 420 $PY -m pip install --no-build-isolation --no-deps "$ROOT" "$ROOT/plugins/mnn-opencl" || exit 1
fi

if stage devices; then
    (nvidia-smi -L 2>/dev/null || echo "no nvidia-smi") | sed 's/^/   | /' | tee -a "$SUMMARY"
    run devices 120 $PY - <<'PYEOF'
import json
import mnn_core as mnn
from mnn_opencl.runtime import discover
for row in mnn.backends():
    print(f"backend {row.name}: available={row.available} {row.reason} devices={row.devices}")
for d in discover().devices:
    dev = d.device
    print(json.dumps({"index": d.index, "label": d.label, "type": d.kind, "driver": dev["driver_version"],
                      "version": dev["version"], "opencl_c": dev["opencl_c_version"], "fp16": d.has_fp16,
                      "compute_units": dev["compute_units"], "clock_mhz": dev["clock_mhz"],
                      "global_mem_gib": round(dev["global_mem"] / 2**30, 1), "max_work_group": dev["max_work_group"]}))
PYEOF
fi

if stage test; then
    run tests_default_device 420 $PY -m pytest -q -rs -p no:cacheprovider "$ROOT/plugins/mnn-opencl/tests" \
        --junitxml="$OUT/tests_default_device.xml"
fi

if stage pocl; then
    if (cd /tmp && $PY -c "from mnn_opencl.runtime import discover; import sys; \
sys.exit(0 if any('portable' in d.label.lower() for d in discover().devices) else 1)"); then
        run tests_pocl 300 env MNN_OPENCL_DEVICE=Portable $PY -m pytest -q -rs -p no:cacheprovider \
            "$ROOT/plugins/mnn-opencl/tests/test_conformance.py" "$ROOT/plugins/mnn-opencl/tests/test_models.py"
    else
        say "pocl: no PoCL device listed; skipped"
    fi
fi

if stage bench; then
    run bench 480 $PY "$ROOT/plugins/mnn-opencl/tools/bench.py" --batch 1,16 --tuning none,fast \
        --precision normal,low --repeat 30 --warmup 5 --json "$OUT/bench.json"
fi

say "done; results in $OUT"

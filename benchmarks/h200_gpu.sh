#!/usr/bin/env bash
# mnn-vulkan and mnn-opencl on the lent NVIDIA H200, in one go: install, both plugin
# test suites (concurrently), a Vulkan per-dispatch profile, the GPU benchmark and the
# OpenCL cold/warm program-cache start-up. Logs go to $OUT (default /tmp/mnn-gpu-h200).
#
#   bash benchmarks/h200_gpu.sh setup tests profile bench startup    # ~6 min
#   bash benchmarks/h200_gpu.sh setup onnx                           # the ONNX node suite, fallback off
#   PLUGINS="vulkan opencl opengl x86" TESTS="vulkan opencl opengl" \
#     bash benchmarks/h200_gpu.sh setup tests opengl                 # mnn-opengl too (NVIDIA EGL)
#
#   PLUGINS=x86 bash benchmarks/h200_gpu.sh setup cpu                  # mnn-x86 vs its CPU peers on the Xeon
#
# SWEEP="wide 16x16x1x1x16 ..." adds forced tilings to the profile; PROFILE_BATCHES (default 1).
# PLUGINS (default: vulkan opencl x86) picks what setup installs, PYTEST_JOBS runs the suites
# with pytest-xdist, ENGINES (default: all of bench_gpu.py's) what bench times, ONNX_BACKENDS
# (default: vulkan opencl) what the onnx stage measures, MODELS (default: bench_gpu.py's) the
# zoo models bench times. The opengl stage runs mnn-opengl's three
# CNNs at 224x224 (plugins/mnn-opengl/tools/check_models.py, batch 1 and 8).
# The Vulkan loader comes as Debian packages in .gl/ (ignored by git; fetch them on an amd64
# Debian machine with `apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0
# libgles2`: NVIDIA's ICD needs libglvnd, libvulkan1 alone finds no driver). The SPIR-V is the
# committed one. Run from the repository root.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-/tmp/mnn-gpu-h200}
mkdir -p "$OUT"
STAGES=" ${*:-setup tests profile bench startup} "
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
TESTS=${TESTS:-vulkan opencl}
wants() { [[ "$STAGES" == *" $1 "* ]]; }
say() { echo "== $*" | tee -a "$OUT/summary.txt"; }

if wants setup; then
    for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
    ldconfig
    t0=$SECONDS
    $PY -m pip install --no-build-isolation --no-deps ./ $(for p in ${PLUGINS:-vulkan opencl x86}; do echo plugins/mnn-$p; done) \
        >"$OUT/pip.log" 2>&1 || { say "pip install FAILED"; tail -n 30 "$OUT/pip.log"; exit 1; }
    say "installed in $((SECONDS - t0)) s"
fi
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$NVIDIA_ICD" ] && ! (cd /tmp && $PY -c "
from mnn_vulkan import device; import sys; sys.exit(0 if device.choose(None).type == 'discrete' else 1)") 2>/dev/null; then
    export VK_DRIVER_FILES=$NVIDIA_ICD VK_ICD_FILENAMES=$NVIDIA_ICD
fi
# glvnd's libEGL looks for vendor files under /usr/share and /etc; NVIDIA's is elsewhere here
NVIDIA_EGL=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
if [ -f "$NVIDIA_EGL" ] && [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] \
    && ! ls /usr/share/glvnd/egl_vendor.d/*nvidia* /etc/glvnd/egl_vendor.d/*nvidia* >/dev/null 2>&1; then
    export __EGL_VENDOR_LIBRARY_FILENAMES=$NVIDIA_EGL
fi
ls -la $NVIDIA_ICD /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>&1 | head -n 8 >>"$OUT/summary.txt"
say "vulkan: $(cd /tmp && $PY -c 'from mnn_vulkan import device; print(device.choose(None).name)' 2>&1 | tail -n 1)"

if [[ "$TESTS $STAGES" == *opengl* ]]; then
    say "opengl: $(cd /tmp && $PY -c 'from mnn_opengl import device
r = device.unavailable_reason(); print(r or device.open_device().name)' 2>&1 | tail -n 1)"
fi

if wants tests; then
    t0=$SECONDS
    for s in $TESTS; do
        (cd /tmp && timeout ${TEST_LIMIT:-480} $PY -m pytest -q -rfs -p no:cacheprovider --tb=short ${PYTEST_JOBS:+-n $PYTEST_JOBS} \
            "$ROOT/plugins/mnn-$s/tests" \
            >"$OUT/pytest_$s.log" 2>&1) &
    done
    wait
    say "tests in $((SECONDS - t0)) s"
    for s in $TESTS; do
        say "$s: $(grep -E '(passed|failed)' "$OUT/pytest_$s.log" | tail -n 1)"
        grep -E "^FAILED|^ERROR" "$OUT/pytest_$s.log" | head -n 20
    done
fi

if wants profile; then
    # the default tiling, then every tiling in $SWEEP (TXxTYxTMxTNxBK or a name) forced
    for bs in ${PROFILE_BATCHES:-1}; do
        for m in resnet18 mobilenet_v2; do
            for t in default ${SWEEP:-}; do
                opt=""; [ "$t" != default ] && opt="--option vulkan.tiles=$t"
                (cd /tmp && timeout 120 $PY "$ROOT/plugins/mnn-vulkan/tools/profile_vulkan.py" --model $m --batch $bs \
                    --top 5 --per-op $opt) 2>&1 | tee -a "$OUT/profile.log"
            done
        done
    done
fi

if wants bench; then
    (cd /tmp && timeout ${BENCH_LIMIT:-420} $PY "$ROOT/benchmarks/bench_gpu.py" --batch 1 --batch 16 --repeat 20 --warmup 3 \
        $(for e in ${ENGINES:-}; do echo --engine $e; done) $(for m in ${MODELS:-}; do echo --model $m; done) --markdown "$OUT/bench_gpu.md") 2>&1 | tee "$OUT/bench.log"
fi

if wants startup; then
    (cd /tmp && timeout 300 $PY "$ROOT/benchmarks/bench_gpu.py" --startup --markdown "$OUT/bench_gpu.md") 2>&1 \
        | tee "$OUT/startup.log"
fi
if wants opengl; then
    for bs in 1 8; do
        (cd /tmp && timeout ${OPENGL_LIMIT:-240} $PY "$ROOT/plugins/mnn-opengl/tools/check_models.py" 224 $bs 10) 2>&1 \
            | tee -a "$OUT/opengl_models.log" | tee -a "$OUT/summary.txt"
    done
fi

if wants cpu; then
    # mnn-x86 against its CPU peers on the host's quiet Xeon (the project machine is shared): the
    # MNN wheel comes from .gpucarry/wheels (pip download MNN==3.6.1 --no-deps --python-version 3.12
    # --only-binary=:all:), ONNX Runtime and PyTorch are there already
    for w in .gpucarry/wheels/*.whl; do [ -f "$w" ] && $PY -m pip install -q --no-deps "$w" >>"$OUT/pip.log" 2>&1; done
    say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
    (cd /tmp && timeout ${CPU_LIMIT:-420} $PY "$ROOT/benchmarks/bench_models.py" --batch 1 \
        $(for t in ${CPU_THREADS:-1 2 4}; do echo --threads $t; done) --repeat 20 --warmup 5 \
        --markdown "$OUT/bench_cpu.md") 2>&1 | tee "$OUT/bench_cpu.log" | grep "vs best" | tee -a "$OUT/summary.txt"
fi

if wants onnx; then
    # run where ./docs/CONFORMANCE.md is a copy of the report (so the command it records is the
    # one to type) and no ./mnn_core shadows the installed package
    t0=$SECONDS
    rm -rf /tmp/mnn-onnx && mkdir -p /tmp/mnn-onnx/docs && cp docs/CONFORMANCE.md /tmp/mnn-onnx/docs/
    (cd /tmp/mnn-onnx && timeout ${ONNX_LIMIT:-500} $PY -m mnn_core.conformance \
        $(for b in ${ONNX_BACKENDS:-vulkan opencl}; do echo --backend $b; done) \
        --jobs ${ONNX_JOBS:-14} --timeout 60 --quiet --output docs/CONFORMANCE.md \
        --json "$OUT/conformance_gpu.json") >"$OUT/onnx.log" 2>&1
    say "onnx: exit $? in $((SECONDS - t0)) s"
    cp /tmp/mnn-onnx/docs/CONFORMANCE.md "$OUT/CONFORMANCE.md"  # the other backends' sections kept
    sed -n '/| backend | passed/,/^$/p' "$OUT/CONFORMANCE.md" 2>/dev/null | tee -a "$OUT/summary.txt"
    tail -n 5 "$OUT/onnx.log"
fi
say "done"

#!/usr/bin/env bash
# Tiling sweeps on the lent H200 (after `PLUGINS="vulkan opengl" bash benchmarks/h200_gpu.sh setup`):
# mnn-vulkan's GEMM/convolution tilings, forced on every layer and as per-layer rules
# (plugins/mnn-vulkan/tools/sweep_tiling.py), and mnn-opengl's convolution register tiles
# (plugins/mnn-opengl/tools/sweep_conv_tile.py), at batch 1 and 16. Logs go to $OUT.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-/tmp/mnn-gpu-h200}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
NVIDIA_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
NVIDIA_EGL=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$NVIDIA_ICD" ] && export VK_DRIVER_FILES=$NVIDIA_ICD
[ -f "$NVIDIA_EGL" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$NVIDIA_EGL
RULE="vulkan.gpu_tilings"
VK_CONFIGS=${VK_CONFIGS:-"default= big=vulkan.tiles=big huge=vulkan.tiles=huge 8x8k8=vulkan.tiles=16x16x8x8x8
 4x8=vulkan.tiles=16x16x4x8x16 8x8t128=vulkan.tiles=16x8x8x8x8 wide=vulkan.tiles=wide
 r-huge=$RULE=huge,big,wide,mid,one r-big=$RULE=big,wide,mid,one r-4x8=$RULE=16x16x4x8x16,big,wide,mid,one
 r-huge-w1056=$RULE=huge,big,wide,mid,one;vulkan.gpu_wave=1056 r-big-w1056=$RULE=big,wide,mid,one;vulkan.gpu_wave=1056
 w528=vulkan.gpu_wave=528 w1056=vulkan.gpu_wave=1056"}
GL_TILES=${GL_TILES:-"auto 8x4 4x4 4x1 1x4 2x2 1x1 8x1"}
if [ -n "$VK_CONFIGS" ]; then
    (cd /tmp && timeout ${VK_LIMIT:-300} $PY "$ROOT/plugins/mnn-vulkan/tools/sweep_tiling.py" --batch 1 --batch 16 \
        --per-op $(for c in $VK_CONFIGS; do echo --config "$c"; done)) >"$OUT/sweep_vulkan.log" 2>&1
    sed -n '/^| model/,$p' "$OUT/sweep_vulkan.log"
fi
if [ -n "$GL_TILES" ]; then
    (cd /tmp && timeout ${GL_LIMIT:-150} $PY "$ROOT/plugins/mnn-opengl/tools/sweep_conv_tile.py" --batch 1 --batch 16 \
        $(for t in $GL_TILES; do echo --tile "$t"; done)) >"$OUT/sweep_opengl.log" 2>&1
    sed -n '/^| model/,$p' "$OUT/sweep_opengl.log"
fi

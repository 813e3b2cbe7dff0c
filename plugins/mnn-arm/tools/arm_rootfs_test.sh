#!/usr/bin/env bash
# The Python suite of mnn-arm on emulated aarch64: an arm64 Debian root, the
# extensions (mnn-core's and mnn-arm's) cross-compiled against it, and pytest
# run by the root's own python3 under qemu-aarch64-static (no chroot, no
# binfmt_misc: qemu -L resolves the root's libraries; the source tree is read
# through the host paths).
#
#   plugins/mnn-arm/tools/arm_rootfs_test.sh [pytest args]
#   MNN_ARM_RUN=python plugins/mnn-arm/tools/arm_rootfs_test.sh SCRIPT [args]   # a script instead
#   MNN_ARM_RUN=build plugins/mnn-arm/tools/arm_rootfs_test.sh                  # build only
#
# Needs (Debian host, as root for debootstrap): debootstrap qemu-user-static
# gcc-aarch64-linux-gnu, network to a Debian mirror the first time, and the
# host's Cython. The root (~250 MB, ~2 min: debootstrap --foreign only
# downloads and unpacks; nothing arm64 runs during it) is cached in
# $MNN_ARM_ROOTFS (default ~/.cache/mnn-arm/bookworm-arm64) and reused.
# Every step is bounded by `timeout`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PLUGIN="$(cd "$HERE/.." && pwd)"
REPO="$(cd "$PLUGIN/../.." && pwd)"
ROOT="${MNN_ARM_ROOTFS:-$HOME/.cache/mnn-arm/bookworm-arm64}"
MIRROR="${MNN_ARM_MIRROR:-http://deb.debian.org/debian}"
CC=aarch64-linux-gnu-gcc
PY=python3.11
for tool in debootstrap qemu-aarch64-static $CC dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "arm_rootfs_test: needs $tool (apt-get install debootstrap qemu-user-static gcc-aarch64-linux-gnu)"; exit 2; }
done

if [ ! -x "$ROOT/usr/bin/$PY" ]; then
    echo "== making the arm64 root in $ROOT (cached afterwards)"
    rm -rf "$ROOT.tmp"
    mkdir -p "$(dirname "$ROOT")"
    timeout 900 debootstrap --foreign --arch=arm64 --variant=minbase \
        --include=python3,python3-dev,python3-numpy,python3-pytest,python3-pluggy bookworm "$ROOT.tmp" "$MIRROR" >/dev/null
    # the second stage would run arm64 maintainer scripts; python needs none of them
    for deb in "$ROOT.tmp"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$ROOT.tmp"; done
    rm -f "$ROOT.tmp"/var/cache/apt/archives/*.deb
    mv "$ROOT.tmp" "$ROOT"
fi

BUILD="${MNN_ARM_BUILD:-$HOME/.cache/mnn-arm/build}"
echo "== cross-compiling mnn-core and mnn-arm for aarch64 into $BUILD"
rm -rf "$BUILD/site" && mkdir -p "$BUILD/site" "$BUILD/obj"
cp -r "$REPO/mnn_core" "$BUILD/site/"
cp -r "$PLUGIN/mnn_arm" "$BUILD/site/"
find "$BUILD/site" \( -name "*.so" -o -name "*.c" -o -name "*.pyc" \) -delete
SUFFIX=".cpython-311-aarch64-linux-gnu.so"
NPINC="$ROOT/usr/lib/python3/dist-packages/numpy/core/include"
CFLAGS=(-O2 -fPIC -I"$ROOT/usr/include/$PY" -I"$ROOT/usr/include" -idirafter "$ROOT/usr/include/aarch64-linux-gnu"
        -I"$NPINC" -I"$REPO/mnn_core/include" -I"$PLUGIN/mnn_arm/csrc" -Wno-unused-function -w)
cyth() { # cythonize a .pyx (host Cython; the C it writes is portable) and cross-compile it
    local pyx="$1" mod="$2"; shift 2
    local so="$BUILD/obj/$mod$SUFFIX"
    # cached unless the .pyx, the .pxi/.pxd files beside it or the core's, its objects or the C headers changed
    if [ -f "$so" ] && [ -z "$(find "$pyx" "$@" "$REPO/mnn_core/include" "$PLUGIN/mnn_arm/csrc" -newer "$so" 2>/dev/null)" ] &&
        [ -z "$(find "$(dirname "$pyx")" "$REPO/mnn_core" "$REPO/mnn_core/backend" -maxdepth 1 \( -name "*.pxi" -o -name "*.pxd" \) \
            -newer "$so" 2>/dev/null)" ]; then
        cp "$so" "$BUILD/site/${mod//.//}$SUFFIX"; return  # cached: nothing it depends on changed
    fi
    timeout 300 cython -3 -I "$REPO" --directive boundscheck=False,wraparound=False,cdivision=True \
        "$pyx" -o "$BUILD/obj/$mod.c" >/dev/null
    timeout 300 $CC "${CFLAGS[@]}" -march=armv8-a -shared "$BUILD/obj/$mod.c" "$@" -lm \
        -o "$so"
    cp "$so" "$BUILD/site/${mod//.//}$SUFFIX"
}
cyth "$REPO/mnn_core/memory/_planner.pyx" mnn_core.memory._planner
cyth "$REPO/mnn_core/runtime/_runloop.pyx" mnn_core.runtime._runloop
objs=()
for unit in caps:armv8-a ops:armv8-a parallel:armv8-a threads:armv8-a fp32:armv8-a eltwise:armv8-a conv:armv8-a int8:armv8-a winograd:armv8-a move:armv8-a reduce:armv8-a matmul_batch:armv8-a math:armv8-a resize:armv8-a deconv:armv8-a rnn:armv8-a select:armv8-a conv3d:armv8-a qlinear:armv8-a ml:armv8-a qlstm:armv8-a scatter:armv8-a \
            fp16:armv8.2-a+fp16 fp16h:armv8.2-a+fp16 fp16h_norm:armv8.2-a+fp16 winograd_fp16:armv8.2-a+fp16 int8_dot:armv8.2-a+dotprod qlstm_dot:armv8.2-a+dotprod; do
    name="${unit%%:*}" march="${unit#*:}"
    timeout 300 $CC "${CFLAGS[@]}" -O3 -march="$march" -c "$PLUGIN/mnn_arm/csrc/$name.c" -o "$BUILD/obj/$name.o"
    objs+=("$BUILD/obj/$name.o")
done
cyth "$PLUGIN/mnn_arm/_arm.pyx" mnn_arm._arm "${objs[@]}"
# entry points, as an installed distribution would declare them
mkdir -p "$BUILD/site/mnn_arm-0.1.0.dist-info" "$BUILD/site/mnn_core-0.1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: mnn-arm\nVersion: 0.1.0\n' > "$BUILD/site/mnn_arm-0.1.0.dist-info/METADATA"
printf '[mnn]\narm = mnn_arm\n' > "$BUILD/site/mnn_arm-0.1.0.dist-info/entry_points.txt"
printf 'Metadata-Version: 2.1\nName: mnn-core\nVersion: 0.1.0\n' > "$BUILD/site/mnn_core-0.1.0.dist-info/METADATA"

# ONNX ops imported through their function bodies (Attention, GroupNormalization), with ONNX Runtime's
# outputs: exported on the host when it has onnx and onnxruntime (tests/test_onnx_function_ops.py)
ONNX_OPS="$BUILD/onnx_ops"
rm -rf "$ONNX_OPS"
if python3 -c "import onnx, onnxruntime" 2>/dev/null; then
    (cd "$REPO" && timeout 300 python3 "$PLUGIN/tools/onnx_function_ops.py" export "$ONNX_OPS" >/dev/null) ||
        echo "== (tools/onnx_function_ops.py export failed: its tests will skip)"
fi

# MNN_ARM_RUN=build stops here: the root and $BUILD/site ready for another runner (tools/count_peer.py)
[ "${MNN_ARM_RUN:-pytest}" = build ] && exit 0

echo "== pytest on emulated aarch64 (qemu-aarch64-static -cpu ${MNN_ARM_CPU:-max})"
LIBS="$ROOT/usr/lib/aarch64-linux-gnu"
REQUIRED="${MNN_REQUIRE_BACKENDS:-}"
REQUIRED="${REQUIRED//,/ }"  # qemu's -E would split a comma-separated value into several variables
cd "$BUILD"  # not the source tree: its mnn_arm/ has no aarch64 extension
# no test path among the arguments (none, or only options such as -k EXPR): the plugin's tests
has_path=0
for arg in "$@"; do [ -e "$arg" ] && has_path=1; done
[ "$has_path" = 1 ] || set -- "$@" "$PLUGIN/tests"
# MNN_ARM_RUN=python runs a script (tools/arm_coverage.py) with the root's python instead of pytest
if [ "${MNN_ARM_RUN:-pytest}" = python ]; then RUNNER=(); else RUNNER=(-m pytest -p no:cacheprovider -q --rootdir "$PLUGIN"); fi
exec timeout "${MNN_ARM_TIMEOUT:-1500}" qemu-aarch64-static -cpu "${MNN_ARM_CPU:-max}" -L "$ROOT" \
    -E PYTHONPATH="$BUILD/site" -E LD_LIBRARY_PATH="$LIBS/blas:$LIBS/lapack" -E MNN_LOAD_PLUGINS=arm \
    -E PYTHONDONTWRITEBYTECODE=1 -E MNN_REQUIRE_BACKENDS="$REQUIRED" -E MNN_ARM_ONNX_OPS="$ONNX_OPS" "$ROOT/usr/bin/$PY" "${RUNNER[@]}" "$@"

#!/usr/bin/env bash
# Cross-compiles tools/thread_time.c with mnn-arm's kernels into one static aarch64 binary and runs it
# under qemu-aarch64-static (-cpu max): single layers at 1, 2, 4, ... up to $1 threads (default 4),
# best of $2 runs (default 3). Needs gcc-aarch64-linux-gnu and qemu-user-static.
#   bash plugins/mnn-arm/tools/thread_time.sh 8 3
#   MNN_THREAD_TIME_BUILD_ONLY=/tmp/tt bash plugins/mnn-arm/tools/thread_time.sh   # build into /tmp/tt only
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PLUGIN="$(dirname "$HERE")"
OUT="${MNN_THREAD_TIME_BUILD_ONLY:-$(mktemp -d)}"
mkdir -p "$OUT"
bash "$PLUGIN/tests/harness/build.sh" "$OUT" >/dev/null
CC=(aarch64-linux-gnu-gcc -O3 -march=armv8-a -I"$PLUGIN/mnn_arm/csrc" -I"$PLUGIN/../../mnn_core/include" -c)
"${CC[@]}" "$PLUGIN/mnn_arm/csrc/ops.c" -o "$OUT/ops.o"
"${CC[@]}" "$PLUGIN/mnn_arm/csrc/threads.c" -o "$OUT/threads.o"
"${CC[@]}" "$HERE/thread_time.c" -o "$OUT/thread_time.o"
objs=()
for o in "$OUT"/*.o; do case "$(basename "$o")" in harness*.o) ;; *) objs+=("$o") ;; esac; done
aarch64-linux-gnu-gcc -static "${objs[@]}" -lm -o "$OUT/thread_time"
[ -n "${MNN_THREAD_TIME_BUILD_ONLY:-}" ] && { echo "$OUT/thread_time"; exit 0; }
qemu-aarch64-static -cpu max "$OUT/thread_time" "${1:-4}" "${2:-3}"

#!/usr/bin/env bash
# Cross-compile the harness: every path's translation unit with its own flags.
#   tests/harness/build.sh OUT_DIR  -> OUT_DIR/harness (static aarch64 executable)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$HERE/../../mnn_arm/csrc"
CORE="$HERE/../../../../mnn_core/include"  # abi.h
OUT="${1:-$HERE/build}"
CC="${CC:-aarch64-linux-gnu-gcc}"
mkdir -p "$OUT"
common=(-O3 -Wall -Wextra -I"$SRC" -I"$CORE" -c)
$CC "${common[@]}" -march=armv8-a "$SRC/caps.c" -o "$OUT/caps.o"
$CC "${common[@]}" -march=armv8-a "$SRC/fp32.c" -o "$OUT/fp32.o"
$CC "${common[@]}" -march=armv8-a "$SRC/eltwise.c" -o "$OUT/eltwise.o"
$CC "${common[@]}" -march=armv8-a "$SRC/conv.c" -o "$OUT/conv.o"
$CC "${common[@]}" -march=armv8-a "$SRC/int8.c" -o "$OUT/int8.o"
$CC "${common[@]}" -march=armv8-a "$SRC/winograd.c" -o "$OUT/winograd.o"
$CC "${common[@]}" -march=armv8-a "$SRC/parallel.c" -o "$OUT/parallel.o"
$CC "${common[@]}" -march=armv8.2-a+fp16 "$SRC/fp16.c" -o "$OUT/fp16.o"
$CC "${common[@]}" -march=armv8.2-a+fp16 "$SRC/fp16h.c" -o "$OUT/fp16h.o"
$CC "${common[@]}" -march=armv8.2-a+fp16 "$SRC/winograd_fp16.c" -o "$OUT/winograd_fp16.o"
$CC "${common[@]}" -march=armv8.2-a+dotprod "$SRC/int8_dot.c" -o "$OUT/int8_dot.o"
for f in harness harness_util harness_int8; do $CC "${common[@]}" -march=armv8-a "$HERE/$f.c" -o "$OUT/$f.o"; done
$CC -static "$OUT"/*.o -lm -o "$OUT/harness"

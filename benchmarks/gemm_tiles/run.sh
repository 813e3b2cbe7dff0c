#!/usr/bin/env bash
# mnn-x86's fp32 GEMM with other AVX-512 register tiles, on SqueezeNet's and MobileNetV2's 1x1
# convolutions (M = output channels, N = pixels, K = input channels), 1 thread unless THREADS:
#   bash benchmarks/gemm_tiles/run.sh                 # 6x32 (the default), 14x32, 8x32, 12x32, 4x48
#   TILES="6x2 14x2" THREADS=2 bash benchmarks/gemm_tiles/run.sh
set -eu
cd "$(dirname "$0")"
CSRC=../../plugins/mnn-x86/mnn_x86/csrc
OUT=${TMPDIR:-/tmp}/mnn_gemm_tiles
mkdir -p "$OUT"
for t in ${TILES:-6x2 14x2 8x2 12x2 4x3}; do  # MR x vectors of 16 columns
    gcc -O3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -DGEMM_MR=${t%x*} -DGEMM_NV=${t#*x} -I$CSRC -I../../mnn_core/include \
        -o "$OUT/harness_$t" harness.c $CSRC/op_threadpool.c -lpthread -lm &
done
wait
for shape in ${SHAPES:-"64 3025 16" "16 3025 64" "16 3025 128" "128 729 32" "32 729 256" "192 169 48" "1000 169 512" "64 3025 256"}; do
    for t in ${TILES:-6x2 14x2 8x2 12x2 4x3}; do "$OUT/harness_$t" $shape "${REPEAT:-300}" "${THREADS:-1}"; done
    echo
done

#!/usr/bin/env bash
# mnn-x86's GEMM outside the engine, built from the plugin's own sources (RESULTS.md, session 10):
#   bash benchmarks/gemm_stream/run.sh      # read bandwidth by size; weights in cache or from DRAM;
#                                           # a squeeze after a producer
# Needs an AVX-512 CPU.
set -eu
cd "$(dirname "$0")"
CSRC=../../plugins/mnn-x86/mnn_x86/csrc
INC="-I$CSRC -I../../mnn_core/include"
OUT=${TMPDIR:-/tmp}/mnn_gemm_stream
mkdir -p "$OUT"
AVX512="-O3 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -fopenmp"
gcc $AVX512 $INC -c $CSRC/isa_avx512.c -o "$OUT/isa_avx512.o" &
gcc $AVX512 $INC -c $CSRC/isa_avx512_t14.c -o "$OUT/isa_avx512_t14.o" &
gcc $AVX512 -mavx512bf16 $INC -c $CSRC/isa_avx512_bf16.c -o "$OUT/isa_avx512_bf16.o" &
gcc -O3 -mavx2 -mfma -fopenmp $INC -c $CSRC/isa_avx2.c -o "$OUT/isa_avx2.o" &
gcc -O3 -fopenmp $INC -c $CSRC/isa_scalar.c -o "$OUT/isa_scalar.o" &
wait
for prog in weights handoff; do
    gcc -O2 -fopenmp $INC $prog.c $CSRC/dispatch.c $CSRC/op_threadpool.c "$OUT"/isa_*.o -o "$OUT/$prog" -lpthread -lm
done
gcc -O2 -mavx512f bandwidth.c -o "$OUT/bandwidth"
"$OUT/bandwidth" 1 4 16 64 512
for sets in 1 8; do
    for t in 1 2; do "$OUT/weights" 49 512 4608 14 $t $sets; done
done
"$OUT/handoff" 16 3025 64

/* Times mnn-x86's fp32 GEMM on a plain NCHW 1x1 convolution's operands (gemm_rows: packed weights
 * as A, the input's rows as B, bias and ReLU in the epilogue) outside the engine, so the register
 * tile can be changed at compile time: run.sh builds it once per -DGEMM_MR/-DGEMM_NV.
 *
 *   ./harness M N K REPEAT [THREADS]    prints the best of REPEAT runs and GFLOP/s */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vec_avx512.h"
#include "x86.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, ISA)
#define PARALLEL_FOR(cond, i, n, ...)                              \
    do {                                                          \
        const int64_t i##_end = (n);                              \
        for (int64_t i = 0; i < i##_end; ++i) __VA_ARGS__          \
    } while (0)
#include "vmath_impl.h"
#include "gemm_impl.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s M N K REPEAT [THREADS]\n", argv[0]);
        return 2;
    }
    const int64_t M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]);
    const int reps = atoi(argv[4]), threads = argc > 5 ? atoi(argv[5]) : 1;
    float *a = aligned_alloc(64, (size_t)(M * K + 64) * 4), *ap = aligned_alloc(64, (size_t)((M + MR) * K + 64) * 4);
    float *b = aligned_alloc(64, (size_t)(K * N + 64) * 4), *c = aligned_alloc(64, (size_t)(M * N + 64) * 4);
    float *bias = aligned_alloc(64, (size_t)(M + 16) * 4);
    for (int64_t i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < K * N; ++i) b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
    for (int64_t i = 0; i < M; ++i) bias[i] = 0.1f;
    FN(pack_a)(a, K, 1, M, K, ap, 1);
    const x86_epilogue e = {1.0f, 1.0f, bias, 1, 0, MNN_ACT_RELU, 0.0f, 0.0f};
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const double t0 = now();
        FN(gemm_rows)(M, N, K, ap, b, N, c, N, &e, threads);
        const double t = now() - t0;
        if (t < best) best = t;
    }
    /* one output against a plain sum: the tile under test must still compute the GEMM */
    const int64_t i0 = M / 2, j0 = N - 1;
    double want = 0.1;
    for (int64_t k = 0; k < K; ++k) want += (double)a[i0 * K + k] * b[k * N + j0];
    if (want < 0) want = 0;
    const double err = c[i0 * N + j0] - want;
    printf("%dx%d tile  M %5ld N %6ld K %4ld  %8.4f ms  %6.1f GFLOP/s%s\n", MR, NR, (long)M, (long)N, (long)K,
           best * 1e3, 2.0 * (double)(M * N * K) / best / 1e9, err * err > 1e-6 ? "  WRONG RESULT" : "");
    return err * err > 1e-6;
}

/* The body every ISA translation unit shares: include after a vec_*.h.
 * It instantiates the generic kernels for that ISA and fills its table. */
#include "x86.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, ISA)
#define STR_(x) #x
#define STR(x) STR_(x)

/* fn(ctx, i) for i in [0, n), on the pool (op_threadpool.c) when `cond` and threads > 1, else on the
 * caller. Not an OpenMP region: libgomp's team would spin beside the pool's workers, twice the threads
 * on the cores (benchmarks/RESULTS_ZOO.md), and its barrier waits for a descheduled thread. Static per
 * translation unit: each ISA's copy calls its own kernels. */
typedef void (*x86_index_fn)(void *ctx, int64_t i);
typedef struct {
    x86_index_fn fn;
    void *ctx;
} x86_index_job;

static void x86_index_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const x86_index_job *j = (const x86_index_job *)ctx;
    (void)worker;
    for (int64_t i = lo; i < hi; ++i) j->fn(j->ctx, i);
}

static inline void x86_for_each(int cond, int threads, int64_t n, x86_index_fn fn, void *ctx) {
    x86_index_job j = {fn, ctx};
    if (cond && threads > 1) x86_parallel_ranges(threads, n, 1, x86_index_range, &j);
    else x86_index_range(&j, 0, n, 0);
}

#include "vmath_impl.h"
#include "gemm_impl.h"
#include "depthwise_impl.h"
#include "eltwise_impl.h"
#include "pool_impl.h"
#include "winograd_impl.h" /* inference (x86infer) */
#include "pointwise_impl.h"
#include "conv_direct_impl.h" /* inference (x86infer): few input channels */
#include "conv_direct_oc_impl.h" /* inference (x86infer): output channels along the vectors */
#include "conv_gap_impl.h"    /* inference (x86infer): x86.ConvGlobalAvgPool, pixels as rows */
#include "pwdw_impl.h"        /* inference (x86infer): x86.ConvDepthwise, strip by strip */
#ifndef X86_TILE_VARIANT /* a second table of the same ISA (isa_avx512_t14.c) shares these */
/* training: backward ops and optimizer updates, in their own table (x86_grad.h) */
#include "grad_impl.h"
#endif

const x86_kernels FN(x86_kernels) = {
    STR(ISA),
    MR,
    NR,
    VLEN,
    FN(pack_a),
    FN(pack_b),
    FN(im2col_b),
    FN(gemm),
    FN(depthwise),
    FN(binary),
    FN(activation),
    FN(channel_affine),
    FN(pool),
    FN(reduce_rows),
    FN(softmax),
    FN(normalize_rows),
    /* -- inference (x86infer) -- */
    FN(winograd),
    FN(gemm_rows),
    FN(transpose_out),
    FN(im2col_a),
    FN(pointwise),
    FN(direct_plan),
    FN(direct_pack),
    FN(direct_conv),
#if VLEN > 1
    FN(direct_pool_plan),
    FN(direct_conv_pool),
#else
    NULL,
    NULL,
#endif
    FN(gap_panel),
    FN(pointwise_dw),
    FN(gemm_a_rows),
#if VLEN > 1
    FN(dco_plan),
    FN(dco_pack),
    FN(dco_conv),
#else
    NULL,
    NULL,
    NULL,
#endif
};

/* -- int8 (quantization): u8 x s8 QLinearConv kernels, their own table (int8.h) -- */
#ifndef X86_TILE_VARIANT
#include "int8_impl.h"
#endif

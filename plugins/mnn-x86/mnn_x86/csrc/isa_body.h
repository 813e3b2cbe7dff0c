/* The body every ISA translation unit shares: include after a vec_*.h.
 * It instantiates the generic kernels for that ISA and fills its table. */
#include "x86.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, ISA)
#define STR_(x) #x
#define STR(x) STR_(x)

/* for (i = 0; i < n; ++i) body, on `threads` OpenMP threads when `cond`, else
 * plainly: even an inactive parallel region sets up a team (malloc, futexes),
 * which small kernels called once per chunk would pay every time */
#define PARALLEL_FOR(cond, i, n, ...)                                             \
    do {                                                                         \
        const int64_t i##_end = (n);                                             \
        if (X86_OMP(cond)) {                                                     \
            _Pragma("omp parallel for num_threads(threads) schedule(static)")    \
            for (int64_t i = 0; i < i##_end; ++i) __VA_ARGS__                     \
        } else {                                                                 \
            for (int64_t i = 0; i < i##_end; ++i) __VA_ARGS__                     \
        }                                                                        \
    } while (0)

#include "vmath_impl.h"
#include "gemm_impl.h"
#include "depthwise_impl.h"
#include "eltwise_impl.h"
#include "pool_impl.h"
#include "winograd_impl.h" /* inference (x86infer) */
#include "pointwise_impl.h"
#include "conv_direct_impl.h" /* inference (x86infer): few input channels */
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
};

/* -- int8 (quantization): u8 x s8 QLinearConv kernels, their own table (int8.h) -- */
#ifndef X86_TILE_VARIANT
#include "int8_impl.h"
#endif

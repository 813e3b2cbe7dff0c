/* The end of a GEMM register tile, shared by the fp32 micro-kernel (gemm_impl.h) and the bf16 one
 * (gemm_bf16_impl.h): the partial sums of earlier K slices, alpha, bias and the fused activation,
 * then the stores. Generic over `vf` (needs a vec_*.h, vmath_impl.h and GEMM_NV); with `rows` and
 * `nv` compile-time constants at the (inlined) call, the accumulators never leave the registers. */
#ifndef MNN_X86_GEMM_EPILOGUE_IMPL_H
#define MNN_X86_GEMM_EPILOGUE_IMPL_H

/* activation over a row of stored results, one loop per activation */
#define ACT_LOOP(ACT)                                                                          \
    for (i = 0; i + VLEN <= n; i += VLEN) vf_store(y + i, vf_activate(vf_load(x + i), ACT, a, b)); \
    if (i < n) vf_store_n(y + i, vf_activate(vf_load_n(x + i, (int)(n - i)), ACT, a, b), (int)(n - i));

static void FN(act_row)(int act, float a, float b, const float *x, float *y, int64_t n) {
    int64_t i;
    switch (act) {
    case MNN_ACT_RELU: ACT_LOOP(MNN_ACT_RELU) break;
    case MNN_ACT_CLIP: ACT_LOOP(MNN_ACT_CLIP) break;
    case MNN_ACT_LEAKY_RELU: ACT_LOOP(MNN_ACT_LEAKY_RELU) break;
    case MNN_ACT_SIGMOID: ACT_LOOP(MNN_ACT_SIGMOID) break;
    case MNN_ACT_SILU: ACT_LOOP(MNN_ACT_SILU) break;
    case MNN_ACT_GELU: ACT_LOOP(MNN_ACT_GELU) break;
    case MNN_ACT_TANH: ACT_LOOP(MNN_ACT_TANH) break;
    case MNN_ACT_HARD_SIGMOID: ACT_LOOP(MNN_ACT_HARD_SIGMOID) break;
    case MNN_ACT_HARD_SWISH: ACT_LOOP(MNN_ACT_HARD_SWISH) break;
    default:
        if (x != y) memmove(y, x, (size_t)n * sizeof(float));
    }
}
#undef ACT_LOOP

/* C[row0 + r][col0 + j] (at c + r * ldc + j) := the epilogue of acc[r] (rows x cols valid; the first
 * nv vectors of each row computed). first: no earlier K slice to add; last: the K slice that
 * finishes the sums, so alpha, bias and activation apply.
 *
 * A macro, not an inline function: handed the accumulator array by address, gcc kept more of it on
 * the stack (the fp32 GEMM block's zmm stack traffic grew by 40 %, its 13x13 layers ran 12-16 %
 * slower); expanded in place, `acc` stays the kernel's own local array, all in registers. */
#define TILE_EPILOGUE(acc, rows, nv, c, ldc, cols, e, row0, col0, first, last)                                    \
    do {                                                                                                        \
        /* each step decided once per tile (with K small it costs as much as the FMAs): earlier K slices,      \
         * alpha, bias, relu/clip in registers; other activations in a pass over the stored rows, in L1 */     \
        const int full_ = (cols) == NR;                                                                         \
        if (!(first))                                                                                           \
            for (int r = 0; r < (rows); ++r)                                                                    \
                for (int v = 0; v < (nv); ++v)                                                                  \
                    acc[r][v] = vf_add(acc[r][v], full_ ? vf_load((c) + r * (ldc) + v * VLEN)                   \
                                                        : vf_load_n((c) + r * (ldc) + v * VLEN, (cols) - v * VLEN)); \
        if (last) {                                                                                             \
            if ((e)->alpha != 1.0f) {                                                                           \
                const vf alpha_ = vf_set1((e)->alpha);                                                          \
                for (int r = 0; r < (rows); ++r)                                                                \
                    for (int v = 0; v < (nv); ++v) acc[r][v] = vf_mul(acc[r][v], alpha_);                       \
            }                                                                                                   \
            if ((e)->bias && (e)->bias_cs == 0) { /* one value per row */                                       \
                for (int r = 0; r < (rows); ++r) {                                                              \
                    const vf b_ = vf_set1((e)->beta * (e)->bias[((row0) + r) * (e)->bias_rs]);                  \
                    for (int v = 0; v < (nv); ++v) acc[r][v] = vf_add(acc[r][v], b_);                           \
                }                                                                                               \
            } else if ((e)->bias) { /* a row of values (per column), maybe different per row */                 \
                const vf beta_ = vf_set1((e)->beta);                                                            \
                for (int r = 0; r < (rows); ++r) {                                                              \
                    const float *br_ = (e)->bias + ((row0) + r) * (e)->bias_rs + (col0);                        \
                    for (int v = 0; v < (nv); ++v)                                                              \
                        acc[r][v] = vf_fma(beta_, vf_load_n(br_ + v * VLEN, (cols) - v * VLEN), acc[r][v]);     \
                }                                                                                               \
            }                                                                                                   \
            if ((e)->act == MNN_ACT_RELU) {                                                                     \
                for (int r = 0; r < (rows); ++r)                                                                \
                    for (int v = 0; v < (nv); ++v) acc[r][v] = vf_relu(acc[r][v]);                              \
            } else if ((e)->act == MNN_ACT_CLIP) {                                                              \
                const vf lo_ = vf_set1((e)->act_alpha), hi_ = vf_set1((e)->act_beta);                           \
                for (int r = 0; r < (rows); ++r)                                                                \
                    for (int v = 0; v < (nv); ++v) acc[r][v] = vf_clamp(acc[r][v], lo_, hi_);                   \
            }                                                                                                   \
        }                                                                                                       \
        if (full_) {                                                                                            \
            for (int r = 0; r < (rows); ++r)                                                                    \
                for (int v = 0; v < (nv); ++v) vf_store((c) + r * (ldc) + v * VLEN, acc[r][v]);                \
        } else {                                                                                                \
            for (int r = 0; r < (rows); ++r)                                                                    \
                for (int v = 0; v < (nv) && v * VLEN < (cols); ++v)                                             \
                    vf_store_n((c) + r * (ldc) + v * VLEN, acc[r][v], (cols) - v * VLEN);                       \
        }                                                                                                       \
        if ((last) && (e)->act > MNN_ACT_CLIP)                                                                  \
            for (int r = 0; r < (rows); ++r)                                                                    \
                FN(act_row)((e)->act, (e)->act_alpha, (e)->act_beta, (c) + r * (ldc), (c) + r * (ldc), (cols)); \
    } while (0)

#endif

/* Convolution as GEMM over a float path's kernels (fp32 or fp16): per image
 * and group, the output columns are cut into chunks whose packed B (im2col,
 * or the input itself for a 1x1 convolution) fits in L2; each chunk meets the
 * packed weights in the path's GEMM, bias and activation in its epilogue. */
#include "arm.h"

int64_t arm_packed_a_elems(int64_t mr, int64_t M, int64_t K) { return (M + mr - 1) / mr * mr * K; }

#define CHUNK_BYTES (128 * 1024)

int64_t arm_conv_chunk_cols(const arm_fkernels *k, const arm_conv_geom *g) {
    const int64_t K = g->C * g->kh * g->kw, N = g->OH * g->OW, nr = k->nr;
    int64_t cols = CHUNK_BYTES / k->elem_bytes / (K > 0 ? K : 1);
    cols = cols / nr * nr;
    if (cols < nr) cols = nr;
    const int64_t n_round = (N + nr - 1) / nr * nr;
    return cols < n_round ? cols : (n_round > 0 ? n_round : nr);
}

static int plain_1x1(const arm_conv_geom *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 && g->OH == g->H &&
           g->OW == g->W;
}

void arm_conv_gemm_cols(const arm_fkernels *k, const arm_conv_geom *g, int64_t og, const void *wpacked,
                        const void *x, void *y, const arm_epilogue *e, int64_t n0, int64_t nc, void *work) {
    const int64_t K = g->C * g->kh * g->kw, N = g->OH * g->OW, eb = k->io_bytes;
    if (plain_1x1(g)) k->pack_b((const char *)x + n0 * eb, N, 1, K, nc, work);
    else k->im2col_b(x, g, n0, nc, work);
    k->gemm(og, nc, K, wpacked, work, (char *)y + n0 * eb, N, e);
}

void arm_conv_gemm(const arm_fkernels *k, const arm_conv_geom *g, int64_t og, const void *wpacked, const void *x,
                   void *y, const arm_epilogue *e, int64_t chunk_cols, void *work) {
    const int64_t N = g->OH * g->OW;
    for (int64_t n0 = 0; n0 < N; n0 += chunk_cols)
        arm_conv_gemm_cols(k, g, og, wpacked, x, y, e, n0, N - n0 < chunk_cols ? N - n0 : chunk_cols, work);
}

/* -- int8 convolution: im2col (zero point as padding) + int8 GEMM + requantization -- */

/* B chunks of up to 128 KiB (within an L2): im2col lays out each k-row once per chunk, a fixed cost per row
 * that weighs on deep layers of small planes (K4 = 4608: 24 columns a chunk, 12 at 64 KiB) */
int64_t arm_qconv_chunk_cols(const arm_conv_geom *g) {
    const int64_t K4 = arm_k4(g->C * g->kh * g->kw), N = g->OH * g->OW;
    int64_t cols = (128 * 1024) / (K4 > 0 ? K4 : 4) / ARM_Q_NR * ARM_Q_NR;
    if (cols < ARM_Q_NR) cols = ARM_Q_NR;
    const int64_t n_round = (N + ARM_Q_NR - 1) / ARM_Q_NR * ARM_Q_NR;
    return cols < n_round ? cols : (n_round > 0 ? n_round : ARM_Q_NR);
}

void arm_qconv_gemm(const arm_qkernels *k, const arm_conv_geom *g, int64_t og, const int8_t *wpacked, const void *x,
                    int is_uint8, int32_t zx, void *y, int out_bytes, const arm_qepilogue *e, int64_t chunk_cols,
                    int8_t *bwork, int32_t *colsum, int32_t *acc) {
    const int64_t K4 = arm_k4(g->C * g->kh * g->kw), N = g->OH * g->OW;
    arm_qepilogue ec = *e;
    int32_t *cs = arm_q_needs_colsum(e, og) ? colsum : NULL;
    ec.colsum = cs;
    for (int64_t n0 = 0; n0 < N; n0 += chunk_cols) {
        const int64_t nc = N - n0 < chunk_cols ? N - n0 : chunk_cols;
        arm_q_im2col_b(x, is_uint8, zx, g, n0, nc, bwork, cs);
        k->gemm(og, nc, K4, wpacked, bwork, acc, nc);
        arm_q_finish(acc, nc, (char *)y + n0 * out_bytes, N, 0, 0, og, nc, &ec);
    }
}

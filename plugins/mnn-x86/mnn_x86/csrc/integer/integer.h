/* Integer matrix products on x86 (mnn_x86/_integer.pyx, ops_integer.py): MatMulInteger and ConvInteger
 * with ONNX semantics (mnn_core/ops/quant.py), exact int32 results, by the u8 x s8 tiles of qgemm.h: the
 * weights packed once (MatMulInteger's B in column panels, ConvInteger's W as rows of words), the
 * activations at each run (A as rows of words, the convolution's input as channel-quad phase planes read
 * in place at each tap's offset, no im2col). */
#ifndef MNN_X86_INTEGER_H
#define MNN_X86_INTEGER_H

#include "family.h"
#include "integer/qgemm.h"

/* MatMulInteger: out[b] = (A[a_at[b]] - za) · (B[b_at[b]] - zb), [M][K] · [K][N]; L = A (uint8), R = B (int8) */
typedef struct {
    x86_op op;
    int64_t M, N, K, Mp, panels; /* Mp: M rounded up to X86_QG_MR; panels of X86_QG_NR columns */
    int64_t batch, a_count, b_count;
    const int64_t *a_at, *b_at; /* [batch]: which A and B matrix each output reads */
    /* positions among the present inputs of zero points given at run, -1 where constant or absent */
    int32_t in_za, in_zb;
    int32_t a_signed, b_signed; /* the operands' types: int8 ones are shifted by 128 into the packed types */
    int32_t *za, *zb;           /* [M], [N]: the zero points as given */
    int32_t *zl, *zr;           /* [Mp], [panels * NR]: the same shifted (zero past M, N) */
    x86_qgemm g;
    int32_t b_ready;            /* B constant: bp and bsum were filled at prepare */
    int32_t *ap;                /* [a_count][Mp][K4] words of A (uint8) */
    int32_t *u;                 /* [a_count][Mp]: A's row sums minus K * zl */
    uint8_t *bp;                /* [b_count][panels][K4][NR][4] bytes of B (int8) */
    int32_t *bsum;              /* [b_count][panels * NR]: B's column sums */
} x86_mmi_state;
int x86_mmi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* B's panels and column sums from b (is_signed: int8, else uint8), all b_count matrices */
void x86_mmi_pack_b(x86_mmi_state *s, const void *b, int is_signed);

/* ConvInteger: 2-D, NCHW, the weights [O][C/group][kh][kw]; L = W (int8), R = X (uint8). K runs over
 * (tap, channel quad, channel): L's words hold 4 channels of one tap, R's words 4 channels of one pixel. */
typedef struct {
    x86_op op;
    int64_t N, C, H, W, O, group, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl;
    int64_t Cg, C4, Og, Ogp;  /* per group: input channels, their quads, output channels (padded to MR) */
    /* the input's phase planes: plane (a, b) holds padded pixel (r * sh + a, c * sw + b) at r * QW + c for
     * r < QH, c < QW, pstride words per channel quad (slack for the last tile); output (oh, ow) is the
     * flattened n = oh * QW + ow < Nf, and tap (i, j) reads plane ((i*dh) % sh, (j*dw) % sw) at n plus a
     * fixed offset (roff) */
    int64_t QH, QW, pstride, planes, Nf, tiles;
    int32_t in_zx, in_zw; /* zero points given at run, -1 where constant or absent */
    int32_t x_signed, w_signed;
    int32_t zx;
    int32_t *zw;          /* [O] as given */
    int32_t *zl, *u;      /* [group][Ogp]: zw shifted; the weight sums minus K * zl */
    int32_t *lsum;        /* [group][Ogp]: the packed weights' sums */
    x86_qgemm g;
    int32_t w_ready;
    int32_t *wp;          /* [group][Ogp][K4] words of W (int8) */
    uint8_t *xq;          /* [group][planes][C4][pstride] words of one image (uint8) */
    const uint8_t *zero_row; /* W zero bytes: the missing channels of a last quad */
} x86_convi_state;
int x86_convi_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
/* the packed weights and their sums from w (is_signed: int8, else uint8) */
void x86_convi_pack_weights(x86_convi_state *s, const void *w, int is_signed);

#endif

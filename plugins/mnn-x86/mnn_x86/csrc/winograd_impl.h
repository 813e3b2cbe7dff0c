/* Winograd F(4x4, 3x3) convolution (stride 1, dilation 1, one group), NCHW or NC16.
 * Generic over `vf`; included by each isa_*.c after gemm_impl.h.
 *
 * The output is cut into 4x4 tiles; each reads a 6x6 input patch. The tiles of
 * all the batch's images are one sequence (image, tile row, tile column), so a
 * batch of small planes still fills the GEMMs. Per chunk of tiles (a multiple of NR):
 *   1. gather: the 6x6 patches of one channel, tile index innermost
 *      (zero outside the input), so the transform is vectorized over tiles;
 *   2. V = B^T d B for every channel, written straight into the 36 packed
 *      GEMM B operands (one per position xi of the 6x6 transform domain);
 *   3. 36 packed GEMMs M[xi] = U[xi] (O x C, transformed at prepare) @ V[xi];
 *   4. Y = A^T M A, plus bias and activation, scattered into the output.
 * That is 36 multiply-adds per 16 outputs and channel pair instead of 144.
 * With NC16 sides (layouts.py) steps 1 + 2 run along a block's channels, one vector load per pixel
 * of a tile's patch (wino_input_nc16), the GEMMs take the tiles as rows (gemm_t) and step 4 stores
 * each output pixel's block whole (wino_output_t).
 * Many chunks: each thread runs whole chunks. Few: the threads share every
 * chunk, split over channels, xi and output channels in turn (x86_parallel). */
#ifndef MNN_X86_WINOGRAD_IMPL_H
#define MNN_X86_WINOGRAD_IMPL_H

#include "bf16.h" /* the 36 GEMMs on bf16 (precision="low"): wino_gemm_bf16 */

/* B^T applied down six values (d0..d5 -> r0..r5) */
#define WINO_BT(d0, d1, d2, d3, d4, d5, r0, r1, r2, r3, r4, r5)                              \
    do {                                                                                  \
        const vf t_a = vf_fnma(vf_set1(4.0f), d2, d4); /* d4 - 4 d2 */                   \
        const vf t_b = vf_fnma(vf_set1(4.0f), d1, d3); /* d3 - 4 d1 */                   \
        const vf t_c = vf_sub(d4, d2), t_d = vf_mul(vf_set1(2.0f), vf_sub(d3, d1));        \
        r0 = vf_fnma(vf_set1(5.0f), d2, vf_fma(vf_set1(4.0f), d0, d4));                   \
        r1 = vf_add(t_a, t_b);                                                            \
        r2 = vf_sub(t_a, t_b);                                                            \
        r3 = vf_add(t_c, t_d);                                                            \
        r4 = vf_sub(t_c, t_d);                                                            \
        r5 = vf_fnma(vf_set1(5.0f), d3, vf_fma(vf_set1(4.0f), d1, d5));                   \
    } while (0)

/* A^T applied down six values (m0..m5 -> o0..o3) */
#define WINO_AT(m0, m1, m2, m3, m4, m5, o0, o1, o2, o3)                                      \
    do {                                                                                  \
        const vf s12 = vf_add(m1, m2), d12 = vf_sub(m1, m2);                              \
        const vf s34 = vf_add(m3, m4), d34 = vf_sub(m3, m4);                              \
        o0 = vf_add(vf_add(m0, s12), s34);                                                \
        o1 = vf_fma(vf_set1(2.0f), d34, d12);                                             \
        o2 = vf_fma(vf_set1(4.0f), s34, s12);                                             \
        o3 = vf_add(vf_fma(vf_set1(8.0f), d34, d12), m5);                                 \
    } while (0)

/* Four-way (de)interleave of VLEN tiles' columns, so that the gather and the scatter of 4x4 tiles
 * along an image row run on whole vectors instead of one float at a time:
 *   wino_deinterleave4: p[4q + j] (q < VLEN, j < 4; p in four vectors x_0..x_3) -> lane q of d_j
 *   wino_interleave4:   lane q of s_j -> p[4q + j] (p in four vectors)
 * Both are a transpose of 4x4 blocks inside each 128-bit lane plus a shuffle of the lanes. */
#if VLEN == 16
static inline void FN(wino_transpose4_lanes)(vf *a, vf *b, vf *c, vf *d) {
    const vf t0 = _mm512_unpacklo_ps(*a, *b), t1 = _mm512_unpacklo_ps(*c, *d);
    const vf t2 = _mm512_unpackhi_ps(*a, *b), t3 = _mm512_unpackhi_ps(*c, *d);
    *a = _mm512_shuffle_ps(t0, t1, 0x44);
    *b = _mm512_shuffle_ps(t0, t1, 0xEE);
    *c = _mm512_shuffle_ps(t2, t3, 0x44);
    *d = _mm512_shuffle_ps(t2, t3, 0xEE);
}
/* lanes [lo, hi) of p, the others zero; memory outside them is never touched */
static inline vf FN(wino_load_range)(const float *p, int64_t lo, int64_t hi) {
    const __mmask16 m = (__mmask16)(vf_mask_n_((int)(hi < 0 ? 0 : hi > 16 ? 16 : hi)) &
                                    ~vf_mask_n_((int)(lo < 0 ? 0 : lo > 16 ? 16 : lo)));
    return _mm512_maskz_loadu_ps(m, p);
}
/* lanes [lo, hi) of v to p; memory outside them is never touched */
static inline void FN(wino_store_range)(float *p, vf v, int64_t lo, int64_t hi) {
    const __mmask16 m = (__mmask16)(vf_mask_n_((int)(hi < 0 ? 0 : hi > 16 ? 16 : hi)) &
                                    ~vf_mask_n_((int)(lo < 0 ? 0 : lo > 16 ? 16 : lo)));
    _mm512_mask_storeu_ps(p, m, v);
}
static inline void FN(wino_deinterleave4)(vf x0, vf x1, vf x2, vf x3, vf *d0, vf *d1, vf *d2, vf *d3) {
    /* x_k holds the quads of tiles 4k..4k+3; gather quads q, q+4, q+8, q+12 into lane set q */
    const vf v0 = _mm512_shuffle_f32x4(x0, x1, 0x88), v1 = _mm512_shuffle_f32x4(x0, x1, 0xDD);
    const vf v2 = _mm512_shuffle_f32x4(x2, x3, 0x88), v3 = _mm512_shuffle_f32x4(x2, x3, 0xDD);
    *d0 = _mm512_shuffle_f32x4(v0, v2, 0x88);
    *d1 = _mm512_shuffle_f32x4(v1, v3, 0x88);
    *d2 = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    *d3 = _mm512_shuffle_f32x4(v1, v3, 0xDD);
    FN(wino_transpose4_lanes)(d0, d1, d2, d3);
}
static inline void FN(wino_interleave4)(vf s0, vf s1, vf s2, vf s3, vf *p) {
    FN(wino_transpose4_lanes)(&s0, &s1, &s2, &s3); /* lane k of s_m: the quad of tile 4k + m */
    const vf v0 = _mm512_shuffle_f32x4(s0, s1, 0x44), v1 = _mm512_shuffle_f32x4(s2, s3, 0x44);
    const vf v2 = _mm512_shuffle_f32x4(s0, s1, 0xEE), v3 = _mm512_shuffle_f32x4(s2, s3, 0xEE);
    p[0] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    p[1] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    p[2] = _mm512_shuffle_f32x4(v2, v3, 0x88);
    p[3] = _mm512_shuffle_f32x4(v2, v3, 0xDD);
}
#elif VLEN == 8
static inline void FN(wino_transpose4_lanes)(vf *a, vf *b, vf *c, vf *d) {
    const vf t0 = _mm256_unpacklo_ps(*a, *b), t1 = _mm256_unpacklo_ps(*c, *d);
    const vf t2 = _mm256_unpackhi_ps(*a, *b), t3 = _mm256_unpackhi_ps(*c, *d);
    *a = _mm256_shuffle_ps(t0, t1, 0x44);
    *b = _mm256_shuffle_ps(t0, t1, 0xEE);
    *c = _mm256_shuffle_ps(t2, t3, 0x44);
    *d = _mm256_shuffle_ps(t2, t3, 0xEE);
}
static inline vf FN(wino_load_range)(const float *p, int64_t lo, int64_t hi) {
    const __m256i m = _mm256_andnot_si256(vf_mask_n_((int)(lo < 0 ? 0 : lo > 8 ? 8 : lo)),
                                          vf_mask_n_((int)(hi < 0 ? 0 : hi > 8 ? 8 : hi)));
    return _mm256_maskload_ps(p, m);
}
static inline void FN(wino_store_range)(float *p, vf v, int64_t lo, int64_t hi) {
    const __m256i m = _mm256_andnot_si256(vf_mask_n_((int)(lo < 0 ? 0 : lo > 8 ? 8 : lo)),
                                          vf_mask_n_((int)(hi < 0 ? 0 : hi > 8 ? 8 : hi)));
    _mm256_maskstore_ps(p, m, v);
}
static inline void FN(wino_deinterleave4)(vf x0, vf x1, vf x2, vf x3, vf *d0, vf *d1, vf *d2, vf *d3) {
    *d0 = _mm256_permute2f128_ps(x0, x2, 0x20);
    *d1 = _mm256_permute2f128_ps(x0, x2, 0x31);
    *d2 = _mm256_permute2f128_ps(x1, x3, 0x20);
    *d3 = _mm256_permute2f128_ps(x1, x3, 0x31);
    FN(wino_transpose4_lanes)(d0, d1, d2, d3);
}
static inline void FN(wino_interleave4)(vf s0, vf s1, vf s2, vf s3, vf *p) {
    FN(wino_transpose4_lanes)(&s0, &s1, &s2, &s3);
    p[0] = _mm256_permute2f128_ps(s0, s1, 0x20);
    p[1] = _mm256_permute2f128_ps(s2, s3, 0x20);
    p[2] = _mm256_permute2f128_ps(s0, s1, 0x31);
    p[3] = _mm256_permute2f128_ps(s2, s3, 0x31);
}
#elif VLEN == 1
static inline vf FN(wino_load_range)(const float *p, int64_t lo, int64_t hi) { return lo <= 0 && hi > 0 ? *p : 0.0f; }
static inline void FN(wino_store_range)(float *p, vf v, int64_t lo, int64_t hi) {
    if (lo <= 0 && hi > 0) *p = v;
}
static inline void FN(wino_deinterleave4)(vf x0, vf x1, vf x2, vf x3, vf *d0, vf *d1, vf *d2, vf *d3) {
    *d0 = x0, *d1 = x1, *d2 = x2, *d3 = x3;
}
static inline void FN(wino_interleave4)(vf s0, vf s1, vf s2, vf s3, vf *p) {
    p[0] = s0, p[1] = s1, p[2] = s2, p[3] = s3;
}
#else
#error "winograd_impl.h: no four-way interleave for this VLEN"
#endif

typedef struct {
    const x86_conv_geom *g;
    int64_t O, TW, T, tc, tcp; /* tiles per row, tiles (all images), tiles per chunk, rounded up to NR */
    int64_t Ti;                /* tiles per image */
    const float *u;            /* 36 packed A operands, u_stride floats apart (gemm_t: packed B of U^T) */
    int64_t u_stride;
    int gemm_t;       /* M^T = V^T U^T: the tiles as the GEMM's rows (x86_wino_plan says when) */
    float *vt;        /* gemm_t: each worker's packed V^T, vt_floats apart */
    int64_t vt_floats;
    const x86_bf16_conv *bf16; /* non-NULL: step 3 on bf16 (wino_gemm_bf16) */
} FN(wino_plan);

/* step 1 + 2 from an NC16 input (always gemm_t): VLEN channels of one tile at a time, a pixel of its
 * 6x6 patch one vector load (zero outside the image), transformed along the channels and stored as
 * row l of V^T[xi] (tcp x C, row-major: wino_vt_rs). Against the NCHW gather this needs no
 * (de)interleave of tile columns: a pixel's channels already lie side by side. */
static void FN(wino_input_nc16)(const FN(wino_plan) *P, const float *x, int64_t t0, int64_t nt, int64_t c0, int64_t c1,
                                float *v) {
    const x86_conv_geom *g = P->g;
    const int64_t C = g->C, plane = g->H * g->W, image = x86_nc16_channels(C) * plane, v_stride = P->tcp * C;
    for (int64_t l = 0; l < nt; ++l) {
        const int64_t t = (t0 + l) % P->Ti, iy0 = (t / P->TW) * 4 - g->pt, ix0 = (t % P->TW) * 4 - g->pl;
        const float *xn = x + (t0 + l) / P->Ti * image;
        /* the patch's rows [i0, i1) and columns [j0, j1) lie inside the image */
        const int i0 = iy0 < 0 ? (int)-iy0 : 0, i1 = g->H - iy0 < 6 ? (int)(g->H - iy0) : 6;
        const int j0 = ix0 < 0 ? (int)-ix0 : 0, j1 = g->W - ix0 < 6 ? (int)(g->W - ix0) : 6;
        for (int64_t c = c0; c < c1; c += VLEN) {
            const int n = c1 - c < VLEN ? (int)(c1 - c) : VLEN;
            /* pixel (iy0 + i, ix0 + j) of channel c, or zero (the padding lanes of a last block load
             * whatever they hold; only n lanes are stored) */
#define WINO_PX(i, j)                                                                                      \
    ((i) >= i0 && (i) < i1 && (j) >= j0 && (j) < j1                                                        \
         ? vf_load(xn + x86_nc16_at(c, (iy0 + (i)) * g->W + ix0 + (j), plane))                             \
         : vf_zero())
            vf tv[36];
            for (int j = 0; j < 6; ++j) /* columns: B^T d */
                WINO_BT(WINO_PX(0, j), WINO_PX(1, j), WINO_PX(2, j), WINO_PX(3, j), WINO_PX(4, j), WINO_PX(5, j),
                        tv[j], tv[6 + j], tv[12 + j], tv[18 + j], tv[24 + j], tv[30 + j]);
#undef WINO_PX
            float *dst = v + l * C + c;
            for (int i = 0; i < 6; ++i) { /* rows: (B^T d) B, position i * 6 + k into V^T[i * 6 + k] */
                vf r[6];
                WINO_BT(tv[i * 6], tv[i * 6 + 1], tv[i * 6 + 2], tv[i * 6 + 3], tv[i * 6 + 4], tv[i * 6 + 5], r[0], r[1],
                        r[2], r[3], r[4], r[5]);
                for (int k = 0; k < 6; ++k) {
                    if (n == VLEN) vf_store(dst + (i * 6 + k) * v_stride, r[k]);
                    else vf_store_n(dst + (i * 6 + k) * v_stride, r[k], n);
                }
            }
        }
    }
}

/* step 1 + 2 for channels [c0, c1) of the chunk starting at tile t0 (nt tiles) */
static void FN(wino_input)(const FN(wino_plan) *P, const float *x, int64_t t0, int64_t nt, int64_t c0, int64_t c1,
                           float *gather, float *v) {
    const x86_conv_geom *g = P->g;
    const int64_t tcp = P->tcp, C = g->C, v_stride = tcp * C;
    if (g->in_nc16) {
        FN(wino_input_nc16)(P, x, t0, nt, c0, c1, v);
        return;
    }
    for (int64_t c = c0; c < c1; ++c) {
        /* gather, one run of up to VLEN tiles of one tile row at a time: each of its 6 input rows
         * (zero outside the image) loaded into 4 vectors, then split into the tiles' columns j = 0..5 */
        for (int64_t l = 0; l < nt;) {
            const int64_t t = (t0 + l) % P->Ti, tx = t % P->TW, iy0 = (t / P->TW) * 4 - g->pt, ix0 = tx * 4 - g->pl;
            const float *plane = x + ((t0 + l) / P->Ti * C + c) * g->H * g->W;
            int64_t n = P->TW - tx;
            if (n > nt - l) n = nt - l;
            if (n > VLEN) n = VLEN;
            /* columns [k0, k1) of the run's 4n + 2 lie inside the image */
            const int64_t k0 = ix0 < 0 ? -ix0 : 0, k1 = g->W - ix0 < 4 * n + 2 ? g->W - ix0 : 4 * n + 2;
            for (int i = 0; i < 6; ++i) {
                const int64_t iy = iy0 + i;
                vf d0 = vf_zero(), d1 = vf_zero(), d2 = vf_zero(), d3 = vf_zero(), d4 = vf_zero(), d5 = vf_zero();
                if (iy >= 0 && iy < g->H && k1 > k0) {
                    /* the run's row in registers (masked loads: never outside the image's row) */
                    const float *src = plane + iy * g->W + ix0;
                    vf x[4], xs[4], unused0, unused1;
                    for (int k = 0; k < 4; ++k) {
                        x[k] = FN(wino_load_range)(src + k * VLEN, k0 - k * VLEN, k1 - k * VLEN);
                        xs[k] = FN(wino_load_range)(src + 4 + k * VLEN, k0 - 4 - k * VLEN, k1 - 4 - k * VLEN);
                    }
                    FN(wino_deinterleave4)(x[0], x[1], x[2], x[3], &d0, &d1, &d2, &d3);
                    /* j = 4, 5: the next tile's columns 0, 1 */
                    FN(wino_deinterleave4)(xs[0], xs[1], xs[2], xs[3], &d4, &d5, &unused0, &unused1);
                    (void)unused0, (void)unused1;
                }
                float *dst = gather + i * 6 * tcp + l;
                vf_store_n(dst, d0, (int)n);
                vf_store_n(dst + tcp, d1, (int)n);
                vf_store_n(dst + 2 * tcp, d2, (int)n);
                vf_store_n(dst + 3 * tcp, d3, (int)n);
                vf_store_n(dst + 4 * tcp, d4, (int)n);
                vf_store_n(dst + 5 * tcp, d5, (int)n);
            }
            l += n;
        }
        for (int64_t l = 0; l < nt; l += VLEN) {
            vf t[36];
            for (int j = 0; j < 6; ++j) { /* columns: B^T d */
                const float *s = gather + j * tcp + l;
                WINO_BT(vf_load(s), vf_load(s + 6 * tcp), vf_load(s + 12 * tcp), vf_load(s + 18 * tcp),
                        vf_load(s + 24 * tcp), vf_load(s + 30 * tcp), t[j], t[6 + j], t[12 + j], t[18 + j],
                        t[24 + j], t[30 + j]);
            }
            /* rows: (B^T d) B, each result into its packed B panel: column l of row c */
            /* gemm_t: V[xi] is one C x tcp row-major panel, packed as V^T by wino_gemm */
            float *dst = P->gemm_t ? v + c * tcp + l : v + (l / NR) * NR * C + c * NR + l % NR;
            for (int i = 0; i < 6; ++i) {
                vf r0, r1, r2, r3, r4, r5;
                WINO_BT(t[i * 6], t[i * 6 + 1], t[i * 6 + 2], t[i * 6 + 3], t[i * 6 + 4], t[i * 6 + 5], r0, r1, r2, r3,
                        r4, r5);
                vf_store(dst + (i * 6 + 0) * v_stride, r0);
                vf_store(dst + (i * 6 + 1) * v_stride, r1);
                vf_store(dst + (i * 6 + 2) * v_stride, r2);
                vf_store(dst + (i * 6 + 3) * v_stride, r3);
                vf_store(dst + (i * 6 + 4) * v_stride, r4);
                vf_store(dst + (i * 6 + 5) * v_stride, r5);
            }
        }
    }
}

/* gemm_t's V[xi], read as V^T (tile i, channel k at i * rs + k * cs): C x tcp row-major from the NCHW
 * gather, tcp x C row-major from an NC16 input (wino_input_nc16) */
static inline int64_t wino_vt_rs(const x86_conv_geom *g) { return g->in_nc16 ? g->C : 1; }
static inline int64_t wino_vt_cs(const x86_conv_geom *g, int64_t tcp) { return g->in_nc16 ? 1 : tcp; }

/* step 3 at position xi on bf16 operands: U[xi] was packed as bf16 at prepare (bf16->w, u_stride
 * words apart); V[xi] is rounded into the worker's bf16 scratch (bf16->bp) as B panels (the fp32
 * ones converted while in L2) or, for gemm_t, packed as A (V^T) */
static void FN(wino_gemm_bf16)(const FN(wino_plan) *P, int64_t nt, int xi, const float *v, float *m, int worker) {
    static const x86_epilogue plain = {1.0f, 0.0f, NULL, 0, 0, MNN_ACT_NONE, 0.0f, 0.0f};
    const x86_bf16_conv *B = P->bf16;
    const int64_t C = P->g->C;
    uint32_t *vb = B->bp + worker * B->bp_words;
    const uint32_t *u = B->w + xi * P->u_stride;
    if (P->gemm_t) {
        B->kb->pack_a(v + xi * P->tcp * C, wino_vt_rs(P->g), wino_vt_cs(P->g, P->tcp), nt, C, vb, 1);
        B->kb->gemm(nt, P->O, C, vb, u, m + xi * P->O * P->tcp, P->O, &plain, 1);
    } else {
        B->kb->convert_b(v + xi * P->tcp * C, C, nt, vb, 1);
        B->kb->gemm(P->O, nt, C, u, vb, m + xi * P->O * P->tcp, P->tcp, &plain, 1);
    }
}

/* step 3 for positions [x0, x1). gemm_t (V[xi] one C x tcp panel, row-major): M^T[xi] (nt x O,
 * row-major) = V^T U^T, V^T packed on the worker's buffer */
static void FN(wino_gemm)(const FN(wino_plan) *P, int64_t nt, int x0, int x1, const float *v, float *m, int worker) {
    x86_epilogue plain = {1.0f, 0.0f, NULL, 0, 0, MNN_ACT_NONE, 0.0f, 0.0f};
    const int64_t C = P->g->C;
    for (int xi = x0; xi < x1; ++xi) {
        if (P->bf16) {
            FN(wino_gemm_bf16)(P, nt, xi, v, m, worker);
        } else if (P->gemm_t) {
            float *vt = P->vt + worker * P->vt_floats;
            FN(pack_a)(v + xi * P->tcp * C, wino_vt_rs(P->g), wino_vt_cs(P->g, P->tcp), nt, C, vt, 1);
            FN(gemm_hint)(nt, P->O, C, vt, P->u + xi * P->u_stride, m + xi * P->O * P->tcp, P->O, &plain, 1,
                          36 * P->u_stride * (int64_t)sizeof(float) >= GEMM_PF_MIN_BYTES); /* all 36 stream */
        } else {
            FN(gemm)(P->O, nt, C, P->u + xi * P->u_stride, v + xi * P->tcp * C, m + xi * P->O * P->tcp, P->tcp,
                     &plain, 1);
        }
    }
}

/* step 4 after gemm_t, for output channels [o0, o1): M^T[xi][tile][o], vectors along o */
static void FN(wino_output_t)(const FN(wino_plan) *P, const float *m, int64_t t0, int64_t nt, int64_t o0, int64_t o1,
                              const float *bias, const x86_epilogue *e, float *y) {
    const x86_conv_geom *g = P->g;
    const int64_t O = P->O, m_stride = O * P->tcp, out_plane = g->OH * g->OW;
    const int64_t image = (g->out_nc16 ? x86_nc16_channels(O) : O) * out_plane;
    float out[16 * VLEN];
    for (int64_t l = 0; l < nt; ++l) {
        const int64_t t = (t0 + l) % P->Ti, oy0 = (t / P->TW) * 4, ox0 = (t % P->TW) * 4;
        float *yi = y + (t0 + l) / P->Ti * image;
        const int64_t rows = g->OH - oy0 < 4 ? g->OH - oy0 : 4, cols = g->OW - ox0 < 4 ? g->OW - ox0 : 4;
        for (int64_t o = o0; o < o1; o += VLEN) {
            const int n = (int)(o1 - o < VLEN ? o1 - o : VLEN);
            const float *s = m + l * O + o;
            const vf b0 = bias ? vf_load_n(bias + o, n) : vf_zero();
            vf tv[24];
            for (int j = 0; j < 6; ++j) /* columns: A^T M */
                WINO_AT(vf_load_n(s + j * m_stride, n), vf_load_n(s + (6 + j) * m_stride, n),
                        vf_load_n(s + (12 + j) * m_stride, n), vf_load_n(s + (18 + j) * m_stride, n),
                        vf_load_n(s + (24 + j) * m_stride, n), vf_load_n(s + (30 + j) * m_stride, n), tv[j],
                        tv[6 + j], tv[12 + j], tv[18 + j]);
            for (int i = 0; i < 4; ++i) { /* rows: (A^T M) A, then bias and activation */
                vf r[4], rows4[4];
                WINO_AT(tv[i * 6], tv[i * 6 + 1], tv[i * 6 + 2], tv[i * 6 + 3], tv[i * 6 + 4], tv[i * 6 + 5], r[0],
                        r[1], r[2], r[3]);
                for (int j = 0; j < 4; ++j) r[j] = vf_activate(vf_add(r[j], b0), e->act, e->act_alpha, e->act_beta);
                if (g->out_nc16) { /* a pixel's VLEN channels are its block's lanes: stored whole where they go */
                    for (int j = 0; i < rows && j < cols; ++j)
                        vf_store(yi + x86_nc16_at(o, (oy0 + i) * g->OW + ox0 + j, out_plane), r[j]);
                    continue;
                }
                /* interleaved, row i of the tile of output channel o + q is floats [4q, 4q + 4) */
                FN(wino_interleave4)(r[0], r[1], r[2], r[3], rows4);
                for (int k = 0; k < 4; ++k) vf_store(out + (i * 4 + k) * VLEN, rows4[k]);
            }
            for (int q = 0; q < n && !g->out_nc16; ++q) { /* the 4x4 tile of each output channel: 4 rows of 4 floats */
                float *dst = yi + (o + q) * out_plane + oy0 * g->OW + ox0;
                for (int64_t i = 0; i < rows; ++i) {
                    if (cols == 4) memcpy(dst + i * g->OW, out + i * 4 * VLEN + 4 * q, 4 * sizeof(float));
                    else
                        for (int64_t j = 0; j < cols; ++j) dst[i * g->OW + j] = out[i * 4 * VLEN + 4 * q + j];
                }
            }
        }
    }
}

/* step 4 for output channels [o0, o1) */
static void FN(wino_output)(const FN(wino_plan) *P, const float *m, int64_t t0, int64_t nt, int64_t o0, int64_t o1,
                            const float *bias, const x86_epilogue *e, float *y) {
    const x86_conv_geom *g = P->g;
    const int64_t tcp = P->tcp, m_stride = P->O * tcp, out_plane = g->OH * g->OW;
    for (int64_t o = o0; o < o1; ++o) {
        const vf b0 = vf_set1(bias ? bias[o] : 0.0f);
        for (int64_t l = 0; l < nt; l += VLEN) {
            const float *s = m + o * tcp + l;
            vf t[24];
            for (int j = 0; j < 6; ++j) /* columns: A^T M */
                WINO_AT(vf_load(s + j * m_stride), vf_load(s + (6 + j) * m_stride), vf_load(s + (12 + j) * m_stride),
                        vf_load(s + (18 + j) * m_stride), vf_load(s + (24 + j) * m_stride),
                        vf_load(s + (30 + j) * m_stride), t[j], t[6 + j], t[12 + j], t[18 + j]);
            vf rows4[4][4]; /* row i of every tile, interleaved: 4 output columns per tile */
            for (int i = 0; i < 4; ++i) { /* rows: (A^T M) A, then bias and activation */
                vf r[4];
                WINO_AT(t[i * 6], t[i * 6 + 1], t[i * 6 + 2], t[i * 6 + 3], t[i * 6 + 4], t[i * 6 + 5], r[0], r[1],
                        r[2], r[3]);
                for (int j = 0; j < 4; ++j) r[j] = vf_activate(vf_add(r[j], b0), e->act, e->act_alpha, e->act_beta);
                FN(wino_interleave4)(r[0], r[1], r[2], r[3], rows4[i]);
            }
            /* runs of tiles in one tile row: 4 consecutive output columns per tile in each row */
            const int64_t lanes = nt - l < VLEN ? nt - l : VLEN;
            for (int64_t q = 0; q < lanes;) {
                const int64_t t = (t0 + l + q) % P->Ti, tx = t % P->TW, oy0 = (t / P->TW) * 4, ox0 = tx * 4;
                float *yo = y + ((t0 + l + q) / P->Ti * P->O + o) * out_plane;
                int64_t n = P->TW - tx; /* a run ends with its tile row, so with its image */
                if (n > lanes - q) n = lanes - q;
                const int64_t rows = g->OH - oy0 < 4 ? g->OH - oy0 : 4, cols = g->OW - ox0 < 4 * n ? g->OW - ox0 : 4 * n;
                /* floats [4q, 4q + cols) of the interleaved rows, by masked stores of whole vectors
                 * placed so that float 4q lands on the run's first output column */
                for (int64_t i = 0; i < rows; ++i) {
                    float *dst = yo + (oy0 + i) * g->OW + ox0 - 4 * q;
                    for (int k = 0; k < 4; ++k)
                        if (4 * q + cols > k * VLEN && 4 * q < (k + 1) * VLEN)
                            FN(wino_store_range)(dst + k * VLEN, rows4[i][k], 4 * q - k * VLEN, 4 * q + cols - k * VLEN);
                }
                q += n;
            }
        }
    }
}

/* a whole chunk, on worker `worker`'s scratch (x86_parallel) */
typedef struct {
    const FN(wino_plan) *P;
    const float *x, *bias;
    const x86_epilogue *e;
    float *y, *work;
    int64_t per;
} FN(wino_job);

static void FN(wino_task)(void *ctx, int64_t ch, int worker) {
    const FN(wino_job) *J = (const FN(wino_job) *)ctx;
    const FN(wino_plan) *P = J->P;
    float *gather = J->work + worker * J->per, *v = gather + 36 * P->tcp, *m = v + 36 * P->tcp * P->g->C;
    const int64_t t0 = ch * P->tc, nt = P->T - t0 < P->tc ? P->T - t0 : P->tc;
    FN(wino_input)(P, J->x, t0, nt, 0, P->g->C, gather, v);
    FN(wino_gemm)(P, nt, 0, 36, v, m, worker);
    if (P->gemm_t) FN(wino_output_t)(P, m, t0, nt, 0, P->O, J->bias, J->e, J->y);
    else FN(wino_output)(P, m, t0, nt, 0, P->O, J->bias, J->e, J->y);
}

/* one chunk shared by the threads: channels, positions and output channels in turn */
#define WINO_SPLIT 8 /* channels per item */
/* an NC16 input's items are whole blocks: wino_input_nc16 loads whole vectors of one block */
static inline int64_t wino_in_split(const x86_conv_geom *g) { return g->in_nc16 ? X86_NC16 : WINO_SPLIT; }
typedef struct {
    const FN(wino_plan) *P;
    const float *x, *bias;
    const x86_epilogue *e;
    float *y, *work, *v, *m; /* work: a gather per worker */
    int64_t t0, nt;
} FN(wino_shared);

static void FN(wino_in_task)(void *ctx, int64_t i, int worker) {
    const FN(wino_shared) *S = (const FN(wino_shared) *)ctx;
    const int64_t split = wino_in_split(S->P->g);
    const int64_t c0 = i * split, C = S->P->g->C, c1 = c0 + split < C ? c0 + split : C;
    FN(wino_input)(S->P, S->x, S->t0, S->nt, c0, c1, S->work + 36 * S->P->tcp * worker, S->v);
}

static void FN(wino_gemm_task)(void *ctx, int64_t xi, int worker) {
    const FN(wino_shared) *S = (const FN(wino_shared) *)ctx;
    FN(wino_gemm)(S->P, S->nt, (int)xi, (int)xi + 1, S->v, S->m, worker);
}

/* gemm_t's output runs along output channels: whole vectors of them per item */
#define WINO_SPLIT_T (2 * VLEN)

static void FN(wino_out_task)(void *ctx, int64_t i, int worker) {
    const FN(wino_shared) *S = (const FN(wino_shared) *)ctx;
    const int64_t split = S->P->gemm_t ? WINO_SPLIT_T : WINO_SPLIT;
    const int64_t o0 = i * split, o1 = o0 + split < S->P->O ? o0 + split : S->P->O;
    (void)worker;
    if (S->P->gemm_t) FN(wino_output_t)(S->P, S->m, S->t0, S->nt, o0, o1, S->bias, S->e, S->y);
    else FN(wino_output)(S->P, S->m, S->t0, S->nt, o0, o1, S->bias, S->e, S->y);
}

/* floats of scratch one chunk needs: the gather, the 36 packed B and the 36 results */
static inline int64_t FN(wino_chunk_floats)(int64_t C, int64_t O, int64_t tcp) {
    return 36 * tcp + 36 * tcp * C + 36 * O * tcp;
}

/* N images, their tiles one sequence. u: 36 packed A operands (u_stride floats apart); tc: tiles per
 * chunk (a multiple of NR, or a thread's share of one chunk: x86_wino_plan); work: `threads` chunk scratches when per_chunk,
 * else one shared chunk scratch plus a gather per thread. */
static void FN(winograd)(const float *x, const float *u, int64_t u_stride, int64_t O, const float *bias, float *y,
                         int64_t N, const x86_conv_geom *g, const x86_epilogue *e, int64_t tc, int per_chunk, int gemm_t,
                         float *work, int threads, const x86_bf16_conv *bf16) {
    FN(wino_plan) P;
    P.bf16 = bf16;
    P.g = g;
    P.O = O;
    P.TW = (g->OW + 3) / 4;
    P.Ti = P.TW * ((g->OH + 3) / 4);
    P.T = N * P.Ti;
    P.tc = tc;
    P.tcp = (tc + NR - 1) / NR * NR;
    P.u = u;
    P.u_stride = u_stride;
    const int64_t chunks = (P.T + tc - 1) / tc, per = FN(wino_chunk_floats)(g->C, O, P.tcp);
    /* gemm_t: one chunk (x86_wino_plan), each worker's V^T after the chunk scratch */
    P.gemm_t = gemm_t;
    P.vt_floats = (P.tcp + MR - 1) / MR * MR * g->C;
    P.vt = work + x86_wino_chunk_floats(per, P.tcp, threads, per_chunk);
    if (threads <= 1 || (per_chunk && chunks < 2)) {
        float *gather = work, *v = gather + 36 * P.tcp, *m = v + 36 * P.tcp * g->C;
        for (int64_t ch = 0; ch < chunks; ++ch) {
            const int64_t t0 = ch * tc, nt = P.T - t0 < tc ? P.T - t0 : tc;
            FN(wino_input)(&P, x, t0, nt, 0, g->C, gather, v);
            FN(wino_gemm)(&P, nt, 0, 36, v, m, 0);
            if (gemm_t) FN(wino_output_t)(&P, m, t0, nt, 0, O, bias, e, y);
            else FN(wino_output)(&P, m, t0, nt, 0, O, bias, e, y);
        }
        return;
    }
    if (per_chunk) {
        FN(wino_job) J = {&P, x, bias, e, y, work, per};
        x86_parallel(threads, chunks, FN(wino_task), &J);
        return;
    }
    /* few chunks: all threads share each one, phase by phase */
    FN(wino_shared) S = {&P, x, bias, e, y, work, work + 36 * P.tcp * threads, NULL, 0, 0};
    S.m = S.v + 36 * P.tcp * g->C;
    for (int64_t ch = 0; ch < chunks; ++ch) {
        S.t0 = ch * tc;
        S.nt = P.T - S.t0 < tc ? P.T - S.t0 : tc;
        x86_parallel(threads, (g->C + wino_in_split(g) - 1) / wino_in_split(g), FN(wino_in_task), &S);
        x86_parallel(threads, 36, FN(wino_gemm_task), &S);
        const int64_t split = gemm_t ? WINO_SPLIT_T : WINO_SPLIT;
        x86_parallel(threads, (O + split - 1) / split, FN(wino_out_task), &S);
    }
}

#endif

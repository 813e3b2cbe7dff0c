/* Part of int8_vnni_impl.h (AVX-512 VNNI int8, the AVX-512 unit only): depthwise QLinearConv, uint8
 * max pooling and the fully connected layer, on the phase planes described there. */

/* Depthwise QLinearConv of one channel on AVX-512 VNNI: the phase planes of the channel (bytes, in xd:
 * [phase][pstride]), then 64 flattened outputs at a time: the bytes of 4 taps interleaved into words
 * (unpack 8 then 16: lane L of quad vector v holds outputs 16L + 4v .. 16L + 4v + 3) and one dpbusd with
 * the 4 weights; the two packs after the requantization undo that order. The tiles go to a flattened row
 * after the planes in xd (x86_qphase_init counts it), then the rows' valid parts to y. With q->window (stride
 * and dilation 1 along rows, kw <= 4) a kernel row's taps are adjacent bytes: one load and a pshufb give
 * the 4 bytes of each output, no unpacks (wq: one word per kernel row, 0 past kw). Else wq: ceil(taps / 4) words of
 * 4 int8 weights (0 past the last tap); tap_off: byte offset of each tap (ceil(taps / 4) * 4, 0 past). */
/* the phase planes of one channel plane into xd ([phase][pstride] bytes), padding zx */
VNNI_TARGET static void FN(q_fill_phases)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const x86_qphase *q,
                                          uint8_t *xd) {
    const int64_t QW = q->QW;
    const int both = g->sw == 2 && !q->direct; /* stride-2 columns: both phases of a row in one pass */
    for (int64_t a = 0; a < g->sh; ++a)
        for (int64_t b = 0; b < g->sw; ++b) {
            if (both) {
                if (b == 1) continue;
                uint8_t *d0 = xd + (a * 2) * q->pstride, *d1 = d0 + q->pstride;
                if (QW <= 32) { /* the padded row in one vector: pshufb evens | odds per lane, then the qwords */
                    const __m512i zv = _mm512_set1_epi8((char)zx);
                    const __m512i split = _mm512_broadcast_i32x4(
                        _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
                    const __m512i gather = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
                    const __mmask64 m = FN(q_bits)(g->pl, g->pl + g->W);
                    for (int64_t r = 0; r < q->QH; ++r) {
                        const int64_t ih = r * g->sh + a - g->pt;
                        __m512i v = zv;
                        if (ih >= 0 && ih < g->H) {
                            v = _mm512_mask_loadu_epi8(zv, m, x + ih * g->W - g->pl);
                            v = _mm512_permutexvar_epi64(gather, _mm512_shuffle_epi8(v, split));
                        }
                        _mm256_storeu_si256((__m256i *)(d0 + r * QW), _mm512_castsi512_si256(v));
                        _mm256_storeu_si256((__m256i *)(d1 + r * QW), _mm512_extracti64x4_epi64(v, 1));
                    }
                    continue;
                }
                for (int64_t r = 0; r < q->QH; ++r) {
                    const int64_t ih = r * g->sh + a - g->pt;
                    if (ih < 0 || ih >= g->H) {
                        for (int64_t c0 = 0; c0 < QW; c0 += 64) { /* whole vectors, as q_phase_row2 */
                            _mm512_storeu_si512(d0 + r * QW + c0, _mm512_set1_epi8((char)zx));
                            _mm512_storeu_si512(d1 + r * QW + c0, _mm512_set1_epi8((char)zx));
                        }
                    } else {
                        FN(q_phase_row2)(x + ih * g->W, g->W, g->pl, zx, d0 + r * QW, d1 + r * QW, QW);
                    }
                }
                continue;
            }
            const int64_t ph = a * g->sw + b;
            if (!((q->phase_mask >> ph) & 1)) continue;
            uint8_t *dst = xd + ph * q->pstride;
            if (q->direct) {
                memcpy(dst, x, (size_t)(g->H * g->W));
                continue;
            }
            int64_t lo, hi;
            FN(q_phase_cols)(g, b, QW, &lo, &hi);
            if (g->sw == 1 && QW <= 64) { /* a row in one vector: one mask for every row (small planes) */
                const __m512i zv = _mm512_set1_epi8((char)zx);
                const __mmask64 m = FN(q_bits)(lo, hi);
                const int64_t off = b - g->pl;
                for (int64_t r = 0; r < q->QH; ++r) {
                    const int64_t ih = r * g->sh + a - g->pt;
                    _mm512_storeu_si512(dst + r * QW, ih < 0 || ih >= g->H
                                                          ? zv
                                                          : _mm512_mask_loadu_epi8(zv, m, x + ih * g->W + off));
                }
                continue;
            }
            for (int64_t r = 0; r < q->QH; ++r) {
                const int64_t ih = r * g->sh + a - g->pt;
                if (ih < 0 || ih >= g->H)
                    memset(dst + r * QW, zx, (size_t)QW);
                else
                    FN(q_phase_row)(x + ih * g->W, b - g->pl, g->sw, lo, hi, zx, dst + r * QW, QW);
            }
        }
}

/* the valid OW of each QW-wide row of flattened outputs yf into the plane y */
VNNI_TARGET static void FN(q_flat_to_plane)(const uint8_t *yf, const x86_conv_geom *g, const x86_qphase *q,
                                            uint8_t *y) {
    if (q->QW == g->OW) { /* no thrown-away columns: the flattened outputs are the plane */
        memcpy(y, yf, (size_t)(g->OH * g->OW));
        return;
    }
    if (g->OW <= 64) { /* a row in one vector: one mask */
        const __mmask64 m = FN(q_bits)(0, g->OW);
        for (int64_t oh = 0; oh < g->OH; ++oh)
            _mm512_mask_storeu_epi8(y + oh * g->OW, m, _mm512_maskz_loadu_epi8(m, yf + oh * q->QW));
        return;
    }
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const uint8_t *src = yf + oh * q->QW;
        uint8_t *d = y + oh * g->OW;
        int64_t c = 0;
        for (; c + 64 <= g->OW; c += 64) _mm512_storeu_si512(d + c, _mm512_loadu_si512(src + c));
        if (c < g->OW) {
            const __mmask64 m = FN(q_bits)(0, g->OW - c);
            _mm512_mask_storeu_epi8(d + c, m, _mm512_maskz_loadu_epi8(m, src + c));
        }
    }
}

/* MaxPool of one uint8 plane on the phase planes (padding 0 never wins: every window holds a pixel) */
VNNI_TARGET static void FN(q_maxpool_vnni)(const uint8_t *x, const x86_conv_geom *g, const x86_qphase *q,
                                           uint8_t *y, uint8_t *xd) {
    FN(q_fill_phases)(x, 0, g, q, xd);
    uint8_t *yf = xd + q->pstride * g->sh * g->sw;
    for (int64_t n0 = 0; n0 < q->Nf; n0 += 64) {
        __m512i v = _mm512_loadu_si512(xd + q->tap_off[0] + n0);
        for (int64_t t = 1; t < q->taps; ++t) v = _mm512_max_epu8(v, _mm512_loadu_si512(xd + q->tap_off[t] + n0));
        _mm512_storeu_si512(yf + n0, v);
    }
    FN(q_flat_to_plane)(yf, g, q, y);
}

VNNI_TARGET static void FN(q_depthwise_vnni)(const uint8_t *x, int32_t zx, const x86_conv_geom *g,
                                             const x86_qphase *q, const int32_t *wq, int32_t bias_eff, float mult,
                                             int32_t zy, int32_t qmin, int32_t qmax, uint8_t *y, uint8_t *xd) {
    FN(q_fill_phases)(x, zx, g, q, xd);
    const int64_t groups = (q->taps + 3) / 4;
    const __m512i zv = _mm512_set1_epi32(zy), bv = _mm512_set1_epi32(bias_eff);
    const __m512 mv = _mm512_set1_ps(mult);
    const int narrow = qmin > 0 || qmax < 255;
    const __m512i qlo = _mm512_set1_epi8((char)qmin), qhi = _mm512_set1_epi8((char)qmax);
    uint8_t *yf = xd + q->pstride * g->sh * g->sw; /* the flattened outputs, whole tiles */
    /* window mode: word e of lane L of vector k holds bytes 16L + 4k + e .. + 3 (k < 3 from the load at n0,
     * k = 3 from the load at n0 + 12): the same output order as the unpacks below */
    const __m512i win[3] = {
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6)),
        _mm512_broadcast_i32x4(_mm_setr_epi8(4, 5, 6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10)),
        _mm512_broadcast_i32x4(_mm_setr_epi8(8, 9, 10, 11, 9, 10, 11, 12, 10, 11, 12, 13, 11, 12, 13, 14))};
    for (int64_t n0 = 0; n0 < q->Nf; n0 += 64) {
        __m512i acc[4] = {bv, bv, bv, bv};
        if (q->window) { /* kernel row t: bytes n .. n + 3 from its first tap, by pshufb within 16-byte lanes */
            for (int64_t t = 0; t < q->groups; ++t) {
                const uint8_t *src = xd + q->tap_off[t * g->kw] + n0;
                const __m512i v = _mm512_loadu_si512(src), u = _mm512_loadu_si512(src + 12);
                const __m512i wv = _mm512_set1_epi32(wq[t]);
                acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_shuffle_epi8(v, win[0]), wv);
                acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_shuffle_epi8(v, win[1]), wv);
                acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_shuffle_epi8(v, win[2]), wv);
                acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_shuffle_epi8(u, win[0]), wv);
            }
        }
        for (int64_t t = 0; t < (q->window ? 0 : groups); ++t) {
            const int64_t *o = q->tap_off + 4 * t;
            const __m512i v0 = _mm512_loadu_si512(xd + o[0] + n0), v1 = _mm512_loadu_si512(xd + o[1] + n0);
            const __m512i v2 = _mm512_loadu_si512(xd + o[2] + n0), v3 = _mm512_loadu_si512(xd + o[3] + n0);
            const __m512i lo01 = _mm512_unpacklo_epi8(v0, v1), hi01 = _mm512_unpackhi_epi8(v0, v1);
            const __m512i lo23 = _mm512_unpacklo_epi8(v2, v3), hi23 = _mm512_unpackhi_epi8(v2, v3);
            const __m512i wv = _mm512_set1_epi32(wq[t]);
            acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(lo01, lo23), wv);
            acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(lo01, lo23), wv);
            acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(hi01, hi23), wv);
            acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(hi01, hi23), wv);
        }
        __m512i qv[4];
        for (int k = 0; k < 4; ++k) qv[k] = FN(q_round)(acc[k], mv, zv);
        __m512i v = _mm512_packus_epi16(_mm512_packs_epi32(qv[0], qv[1]), _mm512_packs_epi32(qv[2], qv[3]));
        if (narrow) v = _mm512_min_epu8(_mm512_max_epu8(v, qlo), qhi);
        _mm512_storeu_si512(yf + n0, v);
    }
    FN(q_flat_to_plane)(yf, g, q, y);
}

/* Fully connected (the images are rows of x, K bytes each): y[n * O + m], 64 rows of W per pass.
 * wp: [ceil(O / 16)][K4][16] words of 4 int8 weights; xrow: scratch of K4 * 4 bytes. */
VNNI_TARGET static void FN(q_fc_vnni)(const uint8_t *x, int64_t N, int64_t K, int64_t O, const int32_t *wp,
                                      const int32_t *bias_eff, const float *mult, int32_t zy, int32_t qmin,
                                      int32_t qmax, uint8_t *y, uint8_t *xrow) {
    const int64_t K4 = (K + 3) / 4, OB = (O + 15) / 16;
    const __m512i zv = _mm512_set1_epi32(zy);
    const __m512 lo = _mm512_set1_ps((float)(qmin - zy)), hi = _mm512_set1_ps((float)(qmax - zy));
    for (int64_t n = 0; n < N; ++n) {
        memcpy(xrow, x + n * K, (size_t)K); /* the words past K meet weight 0 */
        const int32_t *xw = (const int32_t *)xrow;
        for (int64_t ob = 0; ob < OB; ob += 4) {
            const int nb = OB - ob < 4 ? (int)(OB - ob) : 4;
            __m512i acc[4];
            for (int j = 0; j < nb; ++j) {
                const int64_t m = (ob + j) * 16, left = O - m;
                acc[j] = _mm512_maskz_loadu_epi32(left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1), bias_eff + m);
            }
            const int32_t *w0 = wp + ob * K4 * 16;
            if (nb == 4) {
                for (int64_t k4 = 0; k4 < K4; ++k4) {
                    const __m512i xv = _mm512_set1_epi32(xw[k4]);
                    acc[0] = _mm512_dpbusd_epi32(acc[0], xv, _mm512_loadu_si512(w0 + k4 * 16));
                    acc[1] = _mm512_dpbusd_epi32(acc[1], xv, _mm512_loadu_si512(w0 + (K4 + k4) * 16));
                    acc[2] = _mm512_dpbusd_epi32(acc[2], xv, _mm512_loadu_si512(w0 + (2 * K4 + k4) * 16));
                    acc[3] = _mm512_dpbusd_epi32(acc[3], xv, _mm512_loadu_si512(w0 + (3 * K4 + k4) * 16));
                }
            } else {
                for (int64_t k4 = 0; k4 < K4; ++k4) {
                    const __m512i xv = _mm512_set1_epi32(xw[k4]);
                    for (int j = 0; j < nb; ++j)
                        acc[j] = _mm512_dpbusd_epi32(acc[j], xv, _mm512_loadu_si512(w0 + (j * K4 + k4) * 16));
                }
            }
            for (int j = 0; j < nb; ++j) {
                const int64_t m = (ob + j) * 16, left = O - m;
                const __mmask16 mk = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
                __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[j]), _mm512_maskz_loadu_ps(mk, mult + m));
                f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
                const __m512i qv = _mm512_add_epi32(_mm512_cvtps_epi32(f), zv);
                _mm_mask_storeu_epi8(y + n * O + m, mk, _mm512_cvtepi32_epi8(qv));
            }
        }
    }
}

/* AVX-512 VNNI int8 convolution without im2col (included from int8_impl.h in the AVX-512 unit only).
 *
 * Both kernels read the input from "phase planes" (int8.h, x86_qphase): the padded input (padding = zx)
 * split into sh x sw planes of QH x QW pixels, Q[a][b][r][c] = P[r * sh + a][c * sw + b], so that tap
 * (i, j) of output (oh, ow) sits at pixel (oh + i*dh / sh) * QW + ow + j*dw / sw of phase plane
 * (i*dh % sh, j*dw % sw): a fixed offset from the flattened output index n = oh * QW + ow. The kernels
 * compute every flattened n < Nf = (OH - 1) * QW + OW (the columns ow >= OW of each row are computed and
 * thrown away: 2 of 16..58 for 3x3, none for 1x1) and store the rows' valid parts with masked stores.
 * The convolutions can instead read one plane per (row phase a, kernel column j), X[r][c] =
 * P[r * sh + a][c * sw + j * dw] for c < QW = OW (x86_qphase.shifted): tap (i, j) is plane (i*dh % sh, j)
 * at row offset i*dh / sh, nothing is thrown away, and Nf = OH * OW.
 *
 * The zero point is out of the sums (the padding holds zx, not 0): acc = sum w * x + bias_eff with
 * bias_eff = bias - zx * sum w, exact in int32 as int8.h says. The requantization is int8.h's rule
 * (q_round: the clamp done by saturating packs; fc_vnni: the clamp moved before the rounding, exact as rint
 * is monotone and the bounds qmin - zy, qmax - zy are integers). */

/* bits [lo, hi) of a 64-bit mask (0 <= lo, hi <= 64 after clipping) */
static inline __mmask64 FN(q_bits)(int64_t lo, int64_t hi) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > 64 ? 64 : hi;
    if (hi <= lo) return 0;
    const uint64_t top = hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return (__mmask64)(top & ~(((uint64_t)1 << lo) - 1));
}

/* the columns c < QW of phase b whose pixel c * sw + b - pl lies in the row: [lo, hi) */
static inline void FN(q_phase_cols)(const x86_conv_geom *g, int64_t b, int64_t QW, int64_t *lo, int64_t *hi) {
    const int64_t off = b - g->pl, sw = g->sw;
    int64_t l = off >= 0 ? 0 : (-off + sw - 1) / sw, h = g->W - 1 - off < 0 ? 0 : (g->W - 1 - off) / sw + 1;
    h = h > QW ? QW : h;
    *lo = l > h ? h : l;
    *hi = h;
}

/* dst[c] = src[c * sw + off] for lo <= c < hi (the pixels in the row, q_phase_cols), zx elsewhere (c < QW):
 * one row of a phase plane. Writes whole 64-byte vectors: up to 63 bytes past QW may change (the next
 * row, written after this one, or the slack). Masked loads read only the row's own bytes. */
VNNI_TARGET static inline void FN(q_phase_row)(const uint8_t *src, int64_t off, int64_t sw, int64_t lo, int64_t hi,
                                               int32_t zx, uint8_t *dst, int64_t QW) {
    const uint8_t *s = src + off;
    const __m512i zv = _mm512_set1_epi8((char)zx);
    if (sw == 1) {
        for (int64_t c0 = 0; c0 < QW; c0 += 64)
            _mm512_storeu_si512(dst + c0, _mm512_mask_loadu_epi8(zv, FN(q_bits)(lo - c0, hi - c0), s + c0));
        return;
    }
    if (sw == 2) { /* 128 bytes hold 64 even columns; the odd byte after the last valid one is not read */
        const __m512i lowb = _mm512_set1_epi16(0xff);
        for (int64_t c0 = 0; c0 < QW; c0 += 64) {
            const int64_t b0 = 2 * (lo - c0), b1 = 2 * (hi - c0) - 1;
            const __m512i v0 = _mm512_mask_loadu_epi8(zv, FN(q_bits)(b0, b1), s + 2 * c0);
            const __m512i v1 = _mm512_mask_loadu_epi8(zv, FN(q_bits)(b0 - 64, b1 - 64), s + 2 * c0 + 64);
            const __m256i e0 = _mm512_cvtepi16_epi8(_mm512_and_si512(v0, lowb));
            const __m256i e1 = _mm512_cvtepi16_epi8(_mm512_and_si512(v1, lowb));
            _mm512_storeu_si512(dst + c0, _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1));
        }
        return;
    }
    for (int64_t c = 0; c < lo; ++c) dst[c] = (uint8_t)zx;
    for (int64_t c = lo; c < hi; ++c) dst[c] = s[c * sw];
    for (int64_t c = hi; c < QW; ++c) dst[c] = (uint8_t)zx;
}

/* stride 2, both column phases of one row at once: d_b[c] = P[2c + b] for c < QW, where the padded row
 * P[p] = src[p - pl] for 0 <= p - pl < W and zx elsewhere. Whole 64-byte stores, as q_phase_row. */
VNNI_TARGET static inline void FN(q_phase_row2)(const uint8_t *src, int64_t W, int64_t pl, int32_t zx, uint8_t *d0,
                                                uint8_t *d1, int64_t QW) {
    const __m512i zv = _mm512_set1_epi8((char)zx), lowb = _mm512_set1_epi16(0xff);
    for (int64_t c0 = 0; c0 < QW; c0 += 64) {
        const int64_t p0 = 2 * c0, lo = pl - p0, hi = pl + W - p0; /* valid bytes of the 128 from p0 */
        const __mmask64 m0 = FN(q_bits)(lo, hi), m1 = FN(q_bits)(lo - 64, hi - 64);
        const __m512i v0 = _mm512_mask_loadu_epi8(zv, m0, src + p0 - pl);
        const __m512i v1 = m1 ? _mm512_mask_loadu_epi8(zv, m1, src + p0 - pl + 64) : zv;
        const __m256i e0 = _mm512_cvtepi16_epi8(_mm512_and_si512(v0, lowb));
        const __m256i e1 = _mm512_cvtepi16_epi8(_mm512_and_si512(v1, lowb));
        const __m256i o0 = _mm512_cvtepi16_epi8(_mm512_srli_epi16(v0, 8));
        const __m256i o1 = _mm512_cvtepi16_epi8(_mm512_srli_epi16(v1, 8));
        _mm512_storeu_si512(d0 + c0, _mm512_inserti64x4(_mm512_castsi256_si512(e0), e1, 1));
        _mm512_storeu_si512(d1 + c0, _mm512_inserti64x4(_mm512_castsi256_si512(o0), o1, 1));
    }
}

/* blk[k] (k < 4): pixels 16k .. 16k + 15 of the four channel vectors v0..v3 as C4 words (byte e of word n is
 * v_e[n]). The unpacks work within 128-bit lanes (lane L of R_k: pixels 16L + 4k .. + 3); two rounds of 128-bit
 * lane shuffles gather each 16-pixel block. */
VNNI_TARGET static inline void FN(q_quad_words)(__m512i v0, __m512i v1, __m512i v2, __m512i v3, __m512i blk[4]) {
    const __m512i a = _mm512_unpacklo_epi8(v0, v1), b = _mm512_unpackhi_epi8(v0, v1);
    const __m512i c = _mm512_unpacklo_epi8(v2, v3), e = _mm512_unpackhi_epi8(v2, v3);
    const __m512i R0 = _mm512_unpacklo_epi16(a, c), R1 = _mm512_unpackhi_epi16(a, c);
    const __m512i R2 = _mm512_unpacklo_epi16(b, e), R3 = _mm512_unpackhi_epi16(b, e);
    const __m512i X = _mm512_shuffle_i64x2(R0, R1, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i Y = _mm512_shuffle_i64x2(R2, R3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i X2 = _mm512_shuffle_i64x2(R0, R1, _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i Y2 = _mm512_shuffle_i64x2(R2, R3, _MM_SHUFFLE(3, 2, 3, 2));
    blk[0] = _mm512_shuffle_i64x2(X, Y, _MM_SHUFFLE(2, 0, 2, 0));
    blk[1] = _mm512_shuffle_i64x2(X, Y, _MM_SHUFFLE(3, 1, 3, 1));
    blk[2] = _mm512_shuffle_i64x2(X2, Y2, _MM_SHUFFLE(2, 0, 2, 0));
    blk[3] = _mm512_shuffle_i64x2(X2, Y2, _MM_SHUFFLE(3, 1, 3, 1));
}

/* d[n * 4 + k] = r_k[n] for n < N: four channel rows into one row of C4 words, 64 pixels at a time (q_quad_words).
 * The tail reads and writes only its own bytes (masked). */
VNNI_TARGET static void FN(q_interleave_c4)(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                            const uint8_t *r3, int64_t N, uint8_t *d) {
    for (int64_t n = 0; n < N; n += 64) {
        const int64_t left = N - n;
        const __mmask64 m = left >= 64 ? ~(__mmask64)0 : FN(q_bits)(0, left);
        __m512i blk[4];
        FN(q_quad_words)(_mm512_maskz_loadu_epi8(m, r0 + n), _mm512_maskz_loadu_epi8(m, r1 + n),
                         _mm512_maskz_loadu_epi8(m, r2 + n), _mm512_maskz_loadu_epi8(m, r3 + n), blk);
        uint8_t *o = d + n * 4;
        if (left >= 64) {
            for (int k = 0; k < 4; ++k) _mm512_storeu_si512(o + 64 * k, blk[k]);
        } else {
            for (int k = 0; k < 4 && 16 * k < left; ++k)
                _mm512_mask_storeu_epi8(o + 64 * k, FN(q_bits)(0, 4 * (left - 16 * k)), blk[k]);
        }
    }
}

/* pack_c4 of shifted planes where a padded input row fits one vector (sw 1: PW <= 64; sw 2: PW <= 64, both phases
 * of QP <= 32): the 4 channel rows by masked loads (padding zx), stride-2 rows split into evens | odds (pshufb
 * within 128-bit lanes, then the qwords: the low 256 bits the even phase, the high the odd), interleaved in
 * registers into a row of C4 words on the stack (phase b at word 32 * b), then each kernel column's OW words
 * copied out in whole vectors (up to 63 bytes past the row: the next row, written after, or the slack). */
VNNI_TARGET static void FN(q_pack_c4_small)(const uint8_t *x, int32_t zx, const x86_conv_geom *g,
                                            const x86_qphase *q, int64_t c4_0, int64_t c4_1, uint8_t *xq) {
    const int64_t plane = g->H * g->W, QW = q->QW, kw = g->kw, sw = g->sw, pj = q->C4 * q->pstride * 4;
    const __m512i zv = _mm512_set1_epi8((char)zx);
    const __mmask64 m = FN(q_bits)(g->pl, g->pl + g->W); /* the padded row's input bytes, from column -pl */
    const __m512i split = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    const __m512i gather = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    __attribute__((aligned(64))) uint8_t row[256 + 128];
    int64_t src_off[64];
    for (int64_t j = 0; j < kw; ++j) src_off[j] = ((j * g->dw) % sw) * 128 + ((j * g->dw) / sw) * 4;
    for (int64_t c4 = c4_0; c4 < c4_1; ++c4) {
        const uint8_t *xc[4];
        for (int k = 0; k < 4; ++k) xc[k] = x + (c4 * 4 + k < g->C ? c4 * 4 + k : g->C - 1) * plane - g->pl;
        for (int64_t a = 0; a < g->sh; ++a) {
            if (!((q->phase_mask >> (a * kw)) & ((kw >= 64 ? 0 : (uint64_t)1 << kw) - 1))) continue;
            uint8_t *base = xq + (a * kw * q->C4 + c4) * q->pstride * 4;
            for (int64_t r = 0; r < q->QH; ++r) {
                const int64_t ih = r * g->sh + a - g->pt;
                uint8_t *d = base + r * QW * 4;
                if (ih < 0 || ih >= g->H) {
                    for (int64_t j = 0; j < kw; ++j)
                        for (int64_t o = 0; o < QW * 4; o += 64) _mm512_storeu_si512(d + j * pj + o, zv);
                    continue;
                }
                __m512i v[4];
                for (int k = 0; k < 4; ++k) {
                    v[k] = _mm512_mask_loadu_epi8(zv, m, xc[k] + ih * g->W);
                    if (sw == 2) v[k] = _mm512_permutexvar_epi64(gather, _mm512_shuffle_epi8(v[k], split));
                }
                __m512i blk[4];
                FN(q_quad_words)(v[0], v[1], v[2], v[3], blk);
                for (int k = 0; k < 4; ++k) _mm512_store_si512(row + 64 * k, blk[k]);
                for (int64_t j = 0; j < kw; ++j)
                    for (int64_t o = 0; o < QW * 4; o += 64)
                        _mm512_storeu_si512(d + j * pj + o, _mm512_loadu_si512(row + src_off[j] + o));
            }
        }
    }
}

/* q->shifted: the planes (a, j) of channel quads [c4_0, c4_1): xq[a * kw + j][c4][pstride] C4 words,
 * X[r][c] = P[r * sh + a][c * sw + j * dw] for c < QW = OW. Each input row is split into its sw column phases
 * and interleaved once (QP words each, in tmp after the 8 channel rows), then every kernel column copies its
 * OW words from phase (j * dw) % sw at column (j * dw) / sw. Channels past C repeat channel C - 1. */
VNNI_TARGET static void FN(q_pack_c4_shifted)(const uint8_t *x, int32_t zx, const x86_conv_geom *g,
                                              const x86_qphase *q, int64_t c4_0, int64_t c4_1, uint8_t *xq,
                                              uint8_t *tmp) {
    const int64_t plane = g->H * g->W, QP = q->QP, QW = q->QW, tw = QP + 64, kw = g->kw, sw = g->sw;
    uint8_t *rows = tmp + 8 * tw; /* rows + b * tw * 4: column phase b, interleaved */
    int64_t lo[64], hi[64];
    for (int64_t b = 0; b < sw && b < 64; ++b) FN(q_phase_cols)(g, b, QP, &lo[b], &hi[b]);
    for (int64_t c4 = c4_0; c4 < c4_1; ++c4) {
        const uint8_t *xc[4];
        for (int k = 0; k < 4; ++k) xc[k] = x + (c4 * 4 + k < g->C ? c4 * 4 + k : g->C - 1) * plane;
        for (int64_t a = 0; a < g->sh; ++a) {
            const uint64_t amask = (q->phase_mask >> (a * kw)) & ((kw >= 64 ? 0 : (uint64_t)1 << kw) - 1);
            if (!amask) continue; /* no tap reads this row phase */
            uint8_t *base = xq + (a * kw * q->C4 + c4) * q->pstride * 4; /* plane (a, j): + j * C4 * pstride * 4 */
            const int64_t pj = q->C4 * q->pstride * 4;
            for (int64_t r = 0; r < q->QH; ++r) {
                const int64_t ih = r * g->sh + a - g->pt;
                if (ih < 0 || ih >= g->H) {
                    for (int64_t j = 0; j < kw; ++j) memset(base + j * pj + r * QW * 4, zx, (size_t)QW * 4);
                    continue;
                }
                if (sw == 2) { /* both column phases of the row at once */
                    uint8_t *t1 = tmp + 4 * tw;
                    for (int k = 0; k < 4; ++k)
                        FN(q_phase_row2)(xc[k] + ih * g->W, g->W, g->pl, zx, tmp + k * tw, t1 + k * tw, QP);
                    FN(q_interleave_c4)(tmp, tmp + tw, tmp + 2 * tw, tmp + 3 * tw, QP, rows);
                    if (kw > 1 && g->dw % 2) /* some kernel column reads the odd phase */
                        FN(q_interleave_c4)(t1, t1 + tw, t1 + 2 * tw, t1 + 3 * tw, QP, rows + tw * 4);
                } else {
                    for (int64_t b = 0; b < sw; ++b) {
                        for (int k = 0; k < 4; ++k)
                            FN(q_phase_row)(xc[k] + ih * g->W, b - g->pl, sw, lo[b], hi[b], zx, tmp + k * tw, QP);
                        FN(q_interleave_c4)(tmp, tmp + tw, tmp + 2 * tw, tmp + 3 * tw, QP, rows + b * tw * 4);
                    }
                }
                for (int64_t j = 0; j < kw; ++j) {
                    const int64_t cj = j * g->dw;
                    memcpy(base + j * pj + r * QW * 4, rows + (cj % sw) * tw * 4 + (cj / sw) * 4, (size_t)QW * 4);
                }
            }
        }
    }
}

/* The phase planes of channel quads [c4_0, c4_1) of one (image, group): xq[phase][c4][pstride] C4 words.
 * Channels past C repeat channel C - 1 (their weights are 0). tmp: 8 * (QW + 64) bytes. */
VNNI_TARGET static void FN(q_pack_c4)(const uint8_t *x, int32_t zx, const x86_conv_geom *g, const x86_qphase *q,
                                      int64_t c4_0, int64_t c4_1, uint8_t *xq, uint8_t *tmp) {
    if (q->shifted) {
        if ((g->sw == 1 && g->pl + g->W <= 64 && q->QP <= 64) || (g->sw == 2 && q->QP <= 32 && g->pl + g->W <= 64))
            FN(q_pack_c4_small)(x, zx, g, q, c4_0, c4_1, xq);
        else
            FN(q_pack_c4_shifted)(x, zx, g, q, c4_0, c4_1, xq, tmp);
        return;
    }
    const int64_t plane = g->H * g->W, QW = q->QW, tw = QW + 64;
    const int direct = q->direct; /* 1x1, stride 1, no padding: a phase plane is the input plane */
    for (int64_t c4 = c4_0; c4 < c4_1; ++c4) {
        const uint8_t *xc[4];
        for (int k = 0; k < 4; ++k) xc[k] = x + (c4 * 4 + k < g->C ? c4 * 4 + k : g->C - 1) * plane;
        for (int64_t a = 0; a < g->sh; ++a) {
            if (g->sw == 2 && !direct && ((q->phase_mask >> (a * 2)) & 3) == 3) {
                /* stride-2 columns, both phases read: each row split once (q_phase_row2) */
                uint8_t *dst0 = xq + (a * 2 * q->C4 + c4) * q->pstride * 4;
                uint8_t *dst1 = xq + ((a * 2 + 1) * q->C4 + c4) * q->pstride * 4, *t1 = tmp + 4 * tw;
                for (int64_t r = 0; r < q->QH; ++r) {
                    const int64_t ih = r * g->sh + a - g->pt;
                    if (ih < 0 || ih >= g->H) {
                        memset(dst0 + r * QW * 4, zx, (size_t)QW * 4);
                        memset(dst1 + r * QW * 4, zx, (size_t)QW * 4);
                        continue;
                    }
                    for (int k = 0; k < 4; ++k)
                        FN(q_phase_row2)(xc[k] + ih * g->W, g->W, g->pl, zx, tmp + k * tw, t1 + k * tw, QW);
                    FN(q_interleave_c4)(tmp, tmp + tw, tmp + 2 * tw, tmp + 3 * tw, QW, dst0 + r * QW * 4);
                    FN(q_interleave_c4)(t1, t1 + tw, t1 + 2 * tw, t1 + 3 * tw, QW, dst1 + r * QW * 4);
                }
                continue;
            }
            for (int64_t b = 0; b < g->sw; ++b) {
                const int64_t ph = a * g->sw + b;
                if (!((q->phase_mask >> ph) & 1)) continue;
                uint8_t *dst = xq + (ph * q->C4 + c4) * q->pstride * 4;
                if (direct) {
                    FN(q_interleave_c4)(xc[0], xc[1], xc[2], xc[3], plane, dst);
                    continue;
                }
                int64_t lo, hi;
                FN(q_phase_cols)(g, b, QW, &lo, &hi);
                for (int64_t r = 0; r < q->QH; ++r) {
                    const int64_t ih = r * g->sh + a - g->pt;
                    uint8_t *d = dst + r * QW * 4;
                    if (ih < 0 || ih >= g->H) {
                        memset(d, zx, (size_t)QW * 4);
                        continue;
                    }
                    for (int k = 0; k < 4; ++k)
                        FN(q_phase_row)(xc[k] + ih * g->W, b - g->pl, g->sw, lo, hi, zx, tmp + k * tw, QW);
                    FN(q_interleave_c4)(tmp, tmp + tw, tmp + 2 * tw, tmp + 3 * tw, QW, d);
                }
            }
        }
    }
}

/* the parts of flattened outputs [n0, n0 + len) that are real outputs: (start in the tile, length, index
 * into the output plane); returns how many */
static int FN(q_segments)(const x86_qphase *q, int64_t OW, int64_t n0, int64_t len, int64_t seg[][3]) {
    int count = 0;
    const int64_t end = n0 + len < q->Nf ? n0 + len : q->Nf;
    for (int64_t n = n0; n < end;) {
        const int64_t oh = n / q->QW, ow = n % q->QW, row_end = (oh + 1) * q->QW;
        const int64_t e = end < row_end ? end : row_end;
        if (ow < OW) {
            seg[count][0] = n - n0;
            seg[count][1] = (e - n < OW - ow) ? e - n : OW - ow;
            seg[count][2] = oh * OW + ow;
            ++count;
        }
        n = e;
    }
    return count;
}


/* rint(min(float(acc) * mult, 2^30)) + zy in int32: the requantization before its clamp, which the
 * saturating packs after it do (to [0, 255]; qmin/qmax inside that by an 8-bit min/max). Exact against the
 * rule: below -2^31 the conversion gives INT_MIN, which saturates to 0 like any negative value, and the cap
 * keeps large positives from converting to INT_MIN too (anything past 2^30 saturates to 255 either way). */
VNNI_TARGET static inline __m512i FN(q_round)(__m512i acc, __m512 mv, __m512i zv) {
    const __m512 f = _mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), mv), _mm512_set1_ps(1073741824.0f));
    return _mm512_add_epi32(_mm512_cvtps_epi32(f), zv);
}

#define QC_ROW(r)                                                                  \
    {                                                                              \
        const __m512i wv = _mm512_set1_epi32(ak[r]);                               \
        c##r##0 = _mm512_dpbusd_epi32(c##r##0, b0, wv);                            \
        c##r##1 = _mm512_dpbusd_epi32(c##r##1, b1, wv);                            \
    }

#define QC_HALF(r) c##r##0 = _mm512_dpbusd_epi32(c##r##0, b0, _mm512_set1_epi32(ak[r]));

/* y[m][plane] (m < M) for the tiles [p0, p1) of QC_NB flattened outputs. a: [M / QC_MR][taps * C4][QC_MR]
 * C4 words of weights (4 channels of one tap, int8); tap_off: per tap, the C4-word offset of its pixel for
 * n = 0 (phase plane included); channel quad c4 is c4 * pstride words further. */
VNNI_TARGET static void FN(q_conv_c4)(const x86_qphase *q, const uint8_t *xq, int64_t M, int64_t p0, int64_t p1,
                                      const int32_t *a, const int32_t *bias_eff, const float *mult, int32_t zy,
                                      int32_t qmin, int32_t qmax, uint8_t *y, int64_t OW, int64_t plane) {
    const int64_t K4 = q->taps * q->C4, C4 = q->C4, cstride = q->pstride * 4;
    const __m512i zv = _mm512_set1_epi32(zy);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const int narrow = qmin > 0 || qmax < 255;
    const __m256i qlo = _mm256_set1_epi8((char)qmin), qhi = _mm256_set1_epi8((char)qmax);
    for (int64_t p = p0; p < p1; ++p) {
        const int64_t n0 = p * QC_NB;
        int64_t seg[QC_NB + 1][3];
        int nseg = 1;
        if (q->QW == OW) { /* every flattened output is a real one, in plane order */
            seg[0][0] = 0;
            seg[0][1] = q->Nf - n0 < QC_NB ? q->Nf - n0 : QC_NB;
            seg[0][2] = n0;
        } else {
            nseg = FN(q_segments)(q, OW, n0, QC_NB, seg);
        }
        const int half = q->Nf - n0 <= QC_NB / 2; /* the last tile, 16 outputs or fewer: one zmm of them */
        for (int64_t m0 = 0; m0 < M; m0 += QC_MR) {
            const int32_t *ak = a + m0 * K4;
            __m512i c00 = _mm512_set1_epi32(bias_eff[m0]), c01 = c00;
            __m512i c10 = _mm512_set1_epi32(bias_eff[m0 + 1]), c11 = c10;
            __m512i c20 = _mm512_set1_epi32(bias_eff[m0 + 2]), c21 = c20;
            __m512i c30 = _mm512_set1_epi32(bias_eff[m0 + 3]), c31 = c30;
            __m512i c40 = _mm512_set1_epi32(bias_eff[m0 + 4]), c41 = c40;
            __m512i c50 = _mm512_set1_epi32(bias_eff[m0 + 5]), c51 = c50;
            __m512i c60 = _mm512_set1_epi32(bias_eff[m0 + 6]), c61 = c60;
            __m512i c70 = _mm512_set1_epi32(bias_eff[m0 + 7]), c71 = c70;
            for (int64_t t = 0; t < (half ? 0 : q->taps); ++t) {
                const uint8_t *bt = xq + (q->tap_off[t] + n0) * 4;
                for (int64_t c4 = 0; c4 < C4; ++c4, ak += QC_MR, bt += cstride) {
                    const __m512i b0 = _mm512_loadu_si512(bt), b1 = _mm512_loadu_si512(bt + 64);
                    QC_ROW(0) QC_ROW(1) QC_ROW(2) QC_ROW(3) QC_ROW(4) QC_ROW(5) QC_ROW(6) QC_ROW(7)
                }
            }
            for (int64_t t = 0; t < (half ? q->taps : 0); ++t) { /* the second zmm's sums stay bias_eff, unstored */
                const uint8_t *bt = xq + (q->tap_off[t] + n0) * 4;
                for (int64_t c4 = 0; c4 < C4; ++c4, ak += QC_MR, bt += cstride) {
                    const __m512i b0 = _mm512_loadu_si512(bt);
                    QC_HALF(0) QC_HALF(1) QC_HALF(2) QC_HALF(3) QC_HALF(4) QC_HALF(5) QC_HALF(6) QC_HALF(7)
                }
            }
            const __m512i acc[QC_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                                           {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
#pragma GCC unroll 8
            for (int r = 0; r < QC_MR; ++r) { /* unrolled: the accumulators stay in registers */
                if (m0 + r >= M) break;
                const __m512 mv = _mm512_set1_ps(mult[m0 + r]);
                const __m512i q0 = FN(q_round)(acc[r][0], mv, zv), q1 = FN(q_round)(acc[r][1], mv, zv);
                /* saturating packs (lane-wise) clamp to [0, 255]; the dword permute puts the bytes in order */
                const __m512i p = _mm512_packus_epi16(_mm512_packs_epi32(q0, q1), _mm512_setzero_si512());
                __m256i v = _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, p));
                if (narrow) v = _mm256_min_epu8(_mm256_max_epu8(v, qlo), qhi);
                uint8_t *ym = y + (m0 + r) * plane;
                if (nseg == 1 && seg[0][1] == QC_NB) { /* the common case: one whole row piece */
                    _mm256_storeu_si256((__m256i *)(ym + seg[0][2]), v);
                    continue;
                }
                for (int s = 0; s < nseg; ++s) /* masked: the bytes before the segment are not touched */
                    _mm256_mask_storeu_epi8(ym + seg[s][2] - seg[s][0],
                                            (__mmask32)((((uint64_t)1 << seg[s][1]) - 1) << seg[s][0]), v);
            }
        }
    }
}
#undef QC_ROW
#undef QC_HALF

/* -- conv_px: output channels in the vector lanes, pixels broadcast (for small planes, where conv_c4's
 * 16-wide pixel vectors would waste a quarter of the work, e.g. 7x7) --
 * wt: [Mp / 16][taps * C4][16] words (4 input channels of one output channel), Mp = M rounded up to 64;
 * the input pixel-major (q_px_pack). A register tile of PX pixels x 4 zmm (64 channels) runs through every
 * tap and channel quad (the sums never leave the registers; a 64-channel block's weights, taps * C4 * 256
 * bytes, stream from L2 once per tile), then its bytes go to ypx [P][Mp], which the caller transposes to
 * the NCHW plane (q_px_to_nchw). */
#define QPX_MAX 6

__attribute__((always_inline)) VNNI_TARGET static inline void FN(q_px_tile)(
    const int PX, const x86_qphase *q, const uint8_t *xq, const int64_t *pos, const int32_t *wt, int64_t mb,
    int64_t Mp, const int32_t *bias_eff, const float *mult, __m512i zv, __m256i qlo, __m256i qhi, uint8_t *ypx,
    int64_t p0) {
    const int64_t K4 = q->taps * q->C4, C4 = q->C4, ps = q->pstride;
    const int32_t *xw = (const int32_t *)xq; /* pixel-major: (plane * pstride + pixel) * C4 + c4 (q_px_pack) */
    __m512i acc[QPX_MAX][4];
    for (int i = 0; i < QPX_MAX; ++i)
        for (int j = 0; j < 4; ++j)
            acc[i][j] = i >= PX ? _mm512_setzero_si512() : _mm512_loadu_si512(bias_eff + mb * 64 + 16 * j);
    /* named accumulators and pixel pointers (not arrays indexed in the loop): gcc keeps them in registers */
    __m512i a00 = acc[0][0], a01 = acc[0][1], a02 = acc[0][2], a03 = acc[0][3];
    __m512i a10 = acc[1][0], a11 = acc[1][1], a12 = acc[1][2], a13 = acc[1][3];
    __m512i a20 = acc[2][0], a21 = acc[2][1], a22 = acc[2][2], a23 = acc[2][3];
    __m512i a30 = acc[3][0], a31 = acc[3][1], a32 = acc[3][2], a33 = acc[3][3];
    __m512i a40 = acc[4][0], a41 = acc[4][1], a42 = acc[4][2], a43 = acc[4][3];
    __m512i a50 = acc[5][0], a51 = acc[5][1], a52 = acc[5][2], a53 = acc[5][3];
    for (int64_t tt = 0; tt < q->taps; ++tt) {
    const int64_t tp = q->tap_off[tt] / (C4 * ps) * ps + q->tap_off[tt] % (C4 * ps); /* the tap's pixel */
    const int32_t *w = wt + (mb * 4 * K4 + tt * C4) * 16;
    const int32_t *x0 = xw + (pos[0] + tp) * C4, *x1 = PX > 1 ? xw + (pos[1] + tp) * C4 : x0;
    const int32_t *x2 = PX > 2 ? xw + (pos[2] + tp) * C4 : x0, *x3 = PX > 3 ? xw + (pos[3] + tp) * C4 : x0;
    const int32_t *x4 = PX > 4 ? xw + (pos[4] + tp) * C4 : x0, *x5 = PX > 5 ? xw + (pos[5] + tp) * C4 : x0;
#define QPX_STEP(i)                                                                                     \
    if (PX > i) {                                                                                       \
        const __m512i b = _mm512_set1_epi32(x##i[c4]);                                                  \
        a##i##0 = _mm512_dpbusd_epi32(a##i##0, b, w0);                                                  \
        a##i##1 = _mm512_dpbusd_epi32(a##i##1, b, w1);                                                  \
        a##i##2 = _mm512_dpbusd_epi32(a##i##2, b, w2);                                                  \
        a##i##3 = _mm512_dpbusd_epi32(a##i##3, b, w3);                                                  \
    }
    for (int64_t c4 = 0; c4 < C4; ++c4, w += 16) {
        const __m512i w0 = _mm512_loadu_si512(w), w1 = _mm512_loadu_si512(w + K4 * 16);
        const __m512i w2 = _mm512_loadu_si512(w + 2 * K4 * 16), w3 = _mm512_loadu_si512(w + 3 * K4 * 16);
        QPX_STEP(0) QPX_STEP(1) QPX_STEP(2) QPX_STEP(3) QPX_STEP(4) QPX_STEP(5)
    }
    }
#undef QPX_STEP
    acc[0][0] = a00, acc[0][1] = a01, acc[0][2] = a02, acc[0][3] = a03;
    acc[1][0] = a10, acc[1][1] = a11, acc[1][2] = a12, acc[1][3] = a13;
    acc[2][0] = a20, acc[2][1] = a21, acc[2][2] = a22, acc[2][3] = a23;
    acc[3][0] = a30, acc[3][1] = a31, acc[3][2] = a32, acc[3][3] = a33;
    acc[4][0] = a40, acc[4][1] = a41, acc[4][2] = a42, acc[4][3] = a43;
    acc[5][0] = a50, acc[5][1] = a51, acc[5][2] = a52, acc[5][3] = a53;
    for (int j = 0; j < 4; ++j) {
        const __m512 mv = _mm512_loadu_ps(mult + mb * 64 + 16 * j);
        for (int i = 0; i < PX; ++i) {
            const __m512i qv = FN(q_round)(acc[i][j], mv, zv);
            /* int32 -> int16 with signed saturation, then the clamp to [qmin, qmax] (inside [0, 255]) */
            const __m256i h = _mm256_max_epi16(_mm256_min_epi16(_mm512_cvtsepi32_epi16(qv), qhi), qlo);
            _mm_storeu_si128((__m128i *)(ypx + (p0 + i) * Mp + mb * 64 + 16 * j), _mm256_cvtepi16_epi8(h));
        }
    }
}

/* conv_px's input: pack_c4's planes xq[plane][c4][pstride] words made pixel-major, xpm[plane][pstride][C4],
 * so that the pixels a tile broadcasts read their channel quads in order from a few lines (not one line per
 * quad, pstride apart). 4 x 4 word blocks transposed by unpacks; the pixels up to a multiple of 4 past
 * QH * QW come from the planes' slack (pstride >= QH * QW + 32). */
VNNI_TARGET static void FN(q_px_pack)(const uint8_t *xq, const x86_qphase *q, uint8_t *xpm) {
    const int64_t C4 = q->C4, ps = q->pstride, n = q->QH * q->QW;
    for (int64_t ph = 0; ph < 64; ++ph) {
        if (!((q->phase_mask >> ph) & 1)) continue;
        const int32_t *s0 = (const int32_t *)xq + ph * C4 * ps;
        int32_t *d0 = (int32_t *)xpm + ph * ps * C4;
        for (int64_t p = 0; p < n; p += 4) {
            int64_t c4 = 0;
            for (; c4 + 4 <= C4; c4 += 4) {
                const __m128i r0 = _mm_loadu_si128((const __m128i *)(s0 + c4 * ps + p));
                const __m128i r1 = _mm_loadu_si128((const __m128i *)(s0 + (c4 + 1) * ps + p));
                const __m128i r2 = _mm_loadu_si128((const __m128i *)(s0 + (c4 + 2) * ps + p));
                const __m128i r3 = _mm_loadu_si128((const __m128i *)(s0 + (c4 + 3) * ps + p));
                const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
                const __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
                _mm_storeu_si128((__m128i *)(d0 + p * C4 + c4), _mm_unpacklo_epi64(t0, t2));
                _mm_storeu_si128((__m128i *)(d0 + (p + 1) * C4 + c4), _mm_unpackhi_epi64(t0, t2));
                _mm_storeu_si128((__m128i *)(d0 + (p + 2) * C4 + c4), _mm_unpacklo_epi64(t1, t3));
                _mm_storeu_si128((__m128i *)(d0 + (p + 3) * C4 + c4), _mm_unpackhi_epi64(t1, t3));
            }
            for (; c4 < C4; ++c4)
                for (int64_t k = 0; k < 4; ++k) d0[(p + k) * C4 + c4] = s0[c4 * ps + p + k];
        }
    }
}

/* output channel blocks [mb0, mb1) of 64 for all OH * OW pixels (bytes into ypx [P][Mp]) */
VNNI_TARGET static void FN(q_conv_px)(const x86_qphase *q, const uint8_t *xq, int64_t OH, int64_t OW, int64_t mb0,
                                      int64_t mb1, int64_t Mp, const int32_t *wt, const int32_t *bias_eff,
                                      const float *mult, int32_t zy, int32_t qmin, int32_t qmax, uint8_t *ypx) {
    const int64_t P = OH * OW;
    const __m512i zv = _mm512_set1_epi32(zy);
    const __m256i qlo = _mm256_set1_epi16((short)qmin), qhi = _mm256_set1_epi16((short)qmax);
    for (int64_t mb = mb0; mb < mb1; ++mb)
            for (int64_t p0 = 0; p0 < P; p0 += QPX_MAX) {
                const int PX = P - p0 < QPX_MAX ? (int)(P - p0) : QPX_MAX;
                int64_t pos[QPX_MAX];
                for (int i = 0; i < PX; ++i) pos[i] = ((p0 + i) / OW) * q->QW + (p0 + i) % OW;
                switch (PX) {
#define QPX_CALL(n) FN(q_px_tile)(n, q, xq, pos, wt, mb, Mp, bias_eff, mult, zv, qlo, qhi, ypx, p0)
                case 6: QPX_CALL(6); break;
                case 5: QPX_CALL(5); break;
                case 4: QPX_CALL(4); break;
                case 3: QPX_CALL(3); break;
                case 2: QPX_CALL(2); break;
                default: QPX_CALL(1); break;
#undef QPX_CALL
                }
            }
}

/* conv_px's bytes [P][Mp] into the NCHW plane y[m * P + p] (m < O): 16 x 16 blocks transposed in registers
 * (four rounds of unpacks: bytes, words, dwords, qwords), the rows past P and the channels past O left out */
VNNI_TARGET static void FN(q_px_to_nchw)(const uint8_t *ypx, int64_t P, int64_t Mp, int64_t O, uint8_t *y) {
    for (int64_t p0 = 0; p0 < P; p0 += 16) {
        const int64_t np = P - p0 < 16 ? P - p0 : 16;
        const __mmask16 mk = np == 16 ? (__mmask16)0xffff : (__mmask16)((1u << np) - 1);
        for (int64_t m0 = 0; m0 < O; m0 += 16) { /* m0 + 16 <= Mp: the padded channels are readable */
            __m128i r[16], a[16], b[16];
            for (int i = 0; i < 16; ++i)
                r[i] = i < np ? _mm_loadu_si128((const __m128i *)(ypx + (p0 + i) * Mp + m0)) : _mm_setzero_si128();
            for (int i = 0; i < 8; ++i) { /* a[h * 8 + i]: 16-bit element j = column h * 8 + j, rows 2i, 2i + 1 */
                a[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
                a[8 + i] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
            }
            for (int h = 0; h < 2; ++h) /* b[q * 4 + i]: 32-bit element j = column q * 4 + j, rows 4i .. 4i + 3 */
                for (int i = 0; i < 4; ++i) {
                    b[h * 8 + i] = _mm_unpacklo_epi16(a[h * 8 + 2 * i], a[h * 8 + 2 * i + 1]);
                    b[h * 8 + 4 + i] = _mm_unpackhi_epi16(a[h * 8 + 2 * i], a[h * 8 + 2 * i + 1]);
                }
            for (int q = 0; q < 4; ++q) /* a[e * 2 + i]: 64-bit element j = column 2e + j, rows 8i .. 8i + 7 */
                for (int i = 0; i < 2; ++i) {
                    a[q * 4 + i] = _mm_unpacklo_epi32(b[q * 4 + 2 * i], b[q * 4 + 2 * i + 1]);
                    a[q * 4 + 2 + i] = _mm_unpackhi_epi32(b[q * 4 + 2 * i], b[q * 4 + 2 * i + 1]);
                }
            for (int e = 0; e < 8; ++e) { /* r[c]: column c, rows 0 .. 15 */
                r[2 * e] = _mm_unpacklo_epi64(a[2 * e], a[2 * e + 1]);
                r[2 * e + 1] = _mm_unpackhi_epi64(a[2 * e], a[2 * e + 1]);
            }
            const int nm = O - m0 < 16 ? (int)(O - m0) : 16;
            for (int c = 0; c < nm; ++c) _mm_mask_storeu_epi8(y + (m0 + c) * P + p0, mk, r[c]);
        }
    }
}

#include "int8_vnni_dw_impl.h"

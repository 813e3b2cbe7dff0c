/* Part of grad_impl.h (the training kernels), included there once per ISA: Gemm with runtime operands, max pooling and its gradient, the element-wise gradients and softmax cross-entropy. */

/* -- Gemm with runtime operands (a training step's fully connected layers) -------------------------- */

/* C [M][N] = act(A @ op(B) + bias[n]), A(m, k) = a[m*ars + k*acs], B [K][N] row-major or, transB, [N][K].
 * Nothing is packed: B's rows are read where they lie. transB: every C(m, n) is a dot product of two
 * contiguous rows (dot_tile, GW_TO rows of A x GW_TR rows of B); else rowgemm broadcasts A and streams
 * B's rows. Threads take blocks of rows of C. */
typedef struct {
    int64_t M, N, K, ars, acs;
    const float *a, *b, *bias;
    float *c;
    int transB, relu;
} grad_gemm_loop;

/* rows [bi*GW_TO, bi*GW_TO + GW_TO) of C, for bi in [lo, hi) */
static void FN(gemm_rt_blocks)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_gemm_loop *g = (const grad_gemm_loop *)ctx;
    const int64_t M = g->M, N = g->N, K = g->K, ars = g->ars, acs = g->acs;
    const float *a = g->a, *b = g->b, *bias = g->bias;
    float *c = g->c;
    (void)worker;
    for (int64_t bi = lo; bi < hi; ++bi) {
        const int64_t m0 = bi * GW_TO, rows = M - m0 < GW_TO ? M - m0 : GW_TO;
        if (g->transB) { /* a's rows contiguous along K (acs == 1): checked by the caller */
            const float *ap[GW_TO];
            for (int i = 0; i < GW_TO; ++i) ap[i] = a + (m0 + (i < rows ? i : rows - 1)) * ars;
            for (int64_t n0 = 0; n0 < N; n0 += GW_TR) {
                const float *bp[GW_TR];
                for (int j = 0; j < GW_TR; ++j) bp[j] = b + (n0 + j < N ? n0 + j : N - 1) * K;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(ap, bp, K, 1, 0, 0, out);
                for (int i = 0; i < rows; ++i)
                    for (int j = 0; j < GW_TR && n0 + j < N; ++j) {
                        const float v = out[i][j] + (bias ? bias[n0 + j] : 0.0f);
                        c[(m0 + i) * N + n0 + j] = g->relu && v < 0.0f ? 0.0f : v; /* NaN stays */
                    }
            }
        } else {
            FN(rowgemm)(rows, N, K, a + m0 * ars, ars, acs, b, N, c + m0 * N, N, NULL, 0);
            if (bias || g->relu)
                for (int64_t i = m0; i < m0 + rows; ++i)
                    for (int64_t n = 0; n < N; ++n) {
                        const float v = c[i * N + n] + (bias ? bias[n] : 0.0f);
                        c[i * N + n] = g->relu && v < 0.0f ? 0.0f : v;
                    }
        }
    }
}

static void FN(gemm_rt)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                        int transB, const float *bias, int relu, float *c, int threads) {
    const int64_t blocks = (M + GW_TO - 1) / GW_TO;
    grad_gemm_loop g = {M, N, K, ars, acs, a, b, bias, c, transB, relu};
    x86_parallel_ranges(M * N * K >= 16 * GRAD_PARALLEL_MIN_STREAM ? threads : 1, blocks, 1, FN(gemm_rt_blocks), &g);
}

/* -- pooling ------------------------------------------------------------------------------ */

/* window (oh, ow) of a plane: its first maximum's position in the plane, or -1 (tap 0 in the padding) */
static inline int64_t FN(max_pool_arg)(const float *x, const x86_pool_geom *g, int64_t oh, int64_t ow) {
    const int64_t h0 = oh * g->sh - g->pt, w0 = ow * g->sw - g->pl;
    int64_t bh = h0, bw = w0; /* tap 0 when nothing beats -inf (all -inf or NaN), as in the reference */
    float best = -INFINITY;
    for (int64_t i = 0; i < g->kh; ++i) {
        const int64_t ih = h0 + i * g->dh;
        if (ih < 0 || ih >= g->H) continue;
        for (int64_t j = 0; j < g->kw; ++j) {
            const int64_t iw = w0 + j * g->dw;
            if (iw < 0 || iw >= g->W) continue;
            const float v = x[ih * g->W + iw];
            if (v > best) {
                best = v;
                bh = ih;
                bw = iw;
            }
        }
    }
    return bh >= 0 && bh < g->H && bw >= 0 && bw < g->W ? bh * g->W + bw : -1;
}

#define POOL_MAX_TAPS 64

/* dx of one plane. Windows inside the plane go without bounds checks: VLEN at a
 * time where a whole vector fits (the winning tap of each lane found with vector
 * compares and selects), one at a time with branch-free selects elsewhere; the
 * strict > keeps each window's first maximum, as the reference does. Windows
 * touching the padding take the checked path. off[t] is tap t's offset. */
static void FN(max_pool_grad_plane)(const float *dy, const float *x, float *dx, const x86_pool_geom *g,
                                    const int64_t *off) {
    memset(dx, 0, (size_t)(g->H * g->W) * sizeof(float));
    const int64_t taps = g->kh * g->kw, s = g->sw, W = g->W;
    /* output columns [c0, c1) have windows inside the row */
    const int64_t c0 = g->pl > 0 ? (g->pl + s - 1) / s : 0;
    int64_t c1 = W - 1 - (g->kw - 1) * g->dw + g->pl < 0 ? 0 : (W - 1 - (g->kw - 1) * g->dw + g->pl) / s + 1;
    if (c1 > g->OW) c1 = g->OW;
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const int64_t h0 = oh * g->sh - g->pt;
        const float *dyr = dy + oh * g->OW;
        const int inside = h0 >= 0 && h0 + (g->kh - 1) * g->dh < g->H;
        int64_t ow = 0;
        if (inside) {
            for (; ow < c0; ++ow) {
                const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
                if (at >= 0) dx[at] += dyr[ow];
            }
            const float *xr = x + h0 * W - g->pl;
            float *dxr = dx + h0 * W - g->pl;
#if VLEN > 1
            /* a vector of windows from ow reads, per tap, up to `reach` floats from ow*s: vf_load_stride
             * takes up to VLEN * max(s, 2) floats, which must stay inside the row */
            const int64_t reach = (g->kw - 1) * g->dw + VLEN * (s > 2 ? s : 2);
            for (; ow + VLEN <= c1 && ow * s - g->pl + reach <= W; ow += VLEN) {
                vf best = vf_set1(-INFINITY), arg = vf_zero();
                for (int64_t t = 0; t < taps; ++t) {
                    const vf v = vf_load_stride(xr + ow * s + off[t], s);
                    const vmask gt = vf_lt(best, v);
                    best = vf_select(gt, v, best);
                    arg = vf_select(gt, vf_set1((float)t), arg);
                }
                float at[VLEN];
                vf_store(at, arg);
                for (int l = 0; l < VLEN; ++l) dxr[(ow + l) * s + off[(int)at[l]]] += dyr[ow + l];
            }
#endif
            for (; ow < c1; ++ow) {
                const float *xw = xr + ow * s;
                float best = -INFINITY;
                int64_t at = off[0];
                for (int64_t t = 0; t < taps; ++t) {
                    const float v = xw[off[t]];
                    const int gt = v > best;
                    at = gt ? off[t] : at;
                    best = gt ? v : best;
                }
                dxr[ow * s + at] += dyr[ow];
            }
        }
        for (; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dyr[ow];
        }
    }
}

static void FN(max_pool_grad_plane_any)(const float *dy, const float *x, float *dx, const x86_pool_geom *g) {
    memset(dx, 0, (size_t)(g->H * g->W) * sizeof(float));
    for (int64_t oh = 0; oh < g->OH; ++oh)
        for (int64_t ow = 0; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dy[oh * g->OW + ow];
        }
}

/* 2x2 windows at stride 2 (no padding, no dilation; LeNet's pools): VLEN windows at a time, whole vectors
 * throughout. The even and odd columns of a row pair are split into the four taps of VLEN windows, the first
 * maximum picked with the same strict > from -inf as the reference, dy handed to the winning tap by selects,
 * and the four results interleaved back and stored: every input of a whole window is written once, so the
 * plane needs no clearing first (only when odd edges or ceil_mode windows leave inputs outside them). */
#if VLEN == 16
/* row[0, 2n) (n <= 16 windows) -> its even and odd columns */
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const vf a = vf_load_n(row, 2 * n), b = vf_load_n(row + 16, 2 * n - 16);
    *even = _mm512_permutex2var_ps(a, ie, b);
    *odd = _mm512_permutex2var_ps(a, io, b);
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    vf_store_n(row, _mm512_permutex2var_ps(even, lo, odd), 2 * n);
    if (n > 8) vf_store_n(row + 16, _mm512_permutex2var_ps(even, hi, odd), 2 * n - 16);
}
#elif VLEN == 8
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    const vf a = vf_load_n(row, 2 * n), b = vf_load_n(row + 8, 2 * n - 8);
    /* shuffle: a0 a2 b0 b2 | a4 a6 b4 b6; the 64-bit permute puts the halves in order */
    *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    const vf lo = _mm256_unpacklo_ps(even, odd), hi = _mm256_unpackhi_ps(even, odd); /* e0 o0 e1 o1 | e4 o4 e5 o5 */
    vf_store_n(row, _mm256_permute2f128_ps(lo, hi, 0x20), 2 * n);
    if (n > 4) vf_store_n(row + 8, _mm256_permute2f128_ps(lo, hi, 0x31), 2 * n - 8);
}
#else
static inline void FN(pool2_split)(const float *row, int n, vf *even, vf *odd) {
    (void)n;
    *even = row[0];
    *odd = row[1];
}
static inline void FN(pool2_merge)(float *row, int n, vf even, vf odd) {
    (void)n;
    row[0] = even;
    row[1] = odd;
}
#endif

static inline int FN(pool2_fast)(const x86_pool_geom *g) {
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->dh == 1 && g->dw == 1 && g->pt == 0 &&
           g->pl == 0;
}

static void FN(max_pool_grad_plane_2x2)(const float *dy, const float *x, float *dx, const x86_pool_geom *g) {
    const int64_t W = g->W, rows = g->OH < g->H / 2 ? g->OH : g->H / 2, cols = g->OW < W / 2 ? g->OW : W / 2;
    const int edges = rows * 2 != g->H || cols * 2 != W || rows != g->OH || cols != g->OW;
    if (edges) memset(dx, 0, (size_t)(g->H * W) * sizeof(float));
    const vf ninf = vf_set1(-INFINITY), zero = vf_zero();
    for (int64_t oh = 0; oh < rows; ++oh) {
        const float *x0 = x + 2 * oh * W, *x1 = x0 + W;
        float *d0 = dx + 2 * oh * W, *d1 = d0 + W;
        for (int64_t ow = 0; ow < cols; ow += VLEN) {
            const int n = (int)(cols - ow < VLEN ? cols - ow : VLEN);
            vf a, b, c, d;
            FN(pool2_split)(x0 + 2 * ow, n, &a, &b);
            FN(pool2_split)(x1 + 2 * ow, n, &c, &d);
            /* taps in the reference's order a, b, c, d; the last tap that beats the running best wins */
            vf best = vf_select(vf_lt(ninf, a), a, ninf);
            const vmask gb = vf_lt(best, b);
            best = vf_select(gb, b, best);
            const vmask gc = vf_lt(best, c);
            best = vf_select(gc, c, best);
            const vmask gd = vf_lt(best, d);
            vf rest = vf_load_n(dy + oh * g->OW + ow, n);
            const vf td = vf_select(gd, rest, zero);
            rest = vf_select(gd, zero, rest);
            const vf tc = vf_select(gc, rest, zero);
            rest = vf_select(gc, zero, rest);
            const vf tb = vf_select(gb, rest, zero);
            rest = vf_select(gb, zero, rest); /* a: it won, or nothing beat -inf (tap 0, as the reference) */
            FN(pool2_merge)(d0 + 2 * ow, n, rest, tb);
            FN(pool2_merge)(d1 + 2 * ow, n, tc, td);
        }
    }
    if (!edges) return;
    for (int64_t oh = 0; oh < g->OH; ++oh) /* ceil_mode windows past the whole ones */
        for (int64_t ow = oh < rows ? cols : 0; ow < g->OW; ++ow) {
            const int64_t at = FN(max_pool_arg)(x, g, oh, ow);
            if (at >= 0) dx[at] += dy[oh * g->OW + ow];
        }
}

/* MaxPool forward, 2x2 windows at stride 2 with OH = H/2, OW = W/2 (a trailing odd row or column unread):
 * VLEN windows per step from the split row pair; a NaN anywhere in a window makes it NaN, as the reference's max */
static void FN(max_pool_2x2_plane)(const float *x, float *y, const x86_pool_geom *g) {
    for (int64_t oh = 0; oh < g->OH; ++oh) {
        const float *x0 = x + 2 * oh * g->W, *x1 = x0 + g->W;
        for (int64_t ow = 0; ow < g->OW; ow += VLEN) {
            const int n = (int)(g->OW - ow < VLEN ? g->OW - ow : VLEN);
            vf a, b, c, d;
            FN(pool2_split)(x0 + 2 * ow, n, &a, &b);
            FN(pool2_split)(x1 + 2 * ow, n, &c, &d);
            vf m = vf_max(vf_max(a, b), vf_max(c, d));
            m = vf_select(vf_isnan(a), a, m);
            m = vf_select(vf_isnan(b), b, m);
            m = vf_select(vf_isnan(c), c, m);
            m = vf_select(vf_isnan(d), d, m);
            vf_store_n(y + oh * g->OW + ow, m, n);
        }
    }
}

/* the pooling loops: planes [lo, hi) */
typedef struct {
    const float *x, *dy;
    float *y, *dx;
    const x86_pool_geom *g;
    const int64_t *off; /* max_pool_grad's tap offsets (NULL: more taps than POOL_MAX_TAPS) */
    int two;
} grad_pool_loop;

static void FN(max_pool_2x2_planes)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_pool_loop *c = (const grad_pool_loop *)ctx;
    const int64_t in_plane = c->g->H * c->g->W, out_plane = c->g->OH * c->g->OW;
    (void)worker;
    for (int64_t pi = lo; pi < hi; ++pi) FN(max_pool_2x2_plane)(c->x + pi * in_plane, c->y + pi * out_plane, c->g);
}

static void FN(max_pool_2x2)(const float *x, float *y, int64_t planes, const x86_pool_geom *g, int threads) {
    grad_pool_loop c = {x, NULL, y, NULL, g, NULL, 1};
    if (planes * g->H * g->W < GRAD_PARALLEL_MIN_STREAM) threads = 1;
    x86_parallel_ranges(threads, planes, 1, FN(max_pool_2x2_planes), &c);
}

static void FN(max_pool_grad_planes)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_pool_loop *c = (const grad_pool_loop *)ctx;
    const int64_t in_plane = c->g->H * c->g->W, out_plane = c->g->OH * c->g->OW;
    (void)worker;
    for (int64_t pi = lo; pi < hi; ++pi) {
        const float *dy = c->dy + pi * out_plane, *x = c->x + pi * in_plane;
        float *dx = c->dx + pi * in_plane;
        if (c->two) FN(max_pool_grad_plane_2x2)(dy, x, dx, c->g);
        else if (c->off) FN(max_pool_grad_plane)(dy, x, dx, c->g, c->off);
        else FN(max_pool_grad_plane_any)(dy, x, dx, c->g);
    }
}

static void FN(max_pool_grad)(const float *dy, const float *x, float *dx, int64_t planes, const x86_pool_geom *g,
                              int threads) {
    const int64_t in_plane = g->H * g->W, taps = g->kh * g->kw;
    int64_t off[POOL_MAX_TAPS];
    for (int64_t t = 0; t < taps && t < POOL_MAX_TAPS; ++t) off[t] = (t / g->kw) * g->dh * g->W + (t % g->kw) * g->dw;
    const int two = FN(pool2_fast)(g);
    grad_pool_loop c = {x, dy, NULL, dx, g, taps <= POOL_MAX_TAPS ? off : NULL, two};
    if (planes * in_plane < (two ? GRAD_PARALLEL_MIN_STREAM : GRAD_PARALLEL_MIN)) threads = 1;
    x86_parallel_ranges(threads, planes, 1, FN(max_pool_grad_planes), &c);
}

/* -- element-wise ---------------------------------------------------------------------------- */

static void FN(relu_grad_range)(const float *dy, const float *y, float *dx, int64_t n) {
    const vf one = vf_set1(1.0f), zero = vf_zero();
    int64_t i = 0; /* dy * (y > 0), a product as in the reference, so a NaN dy stays NaN */
    for (; i + VLEN <= n; i += VLEN)
        vf_store(dx + i, vf_mul(vf_load(dy + i), vf_select(vf_lt(zero, vf_load(y + i)), one, zero)));
    if (i < n) {
        const int m = (int)(n - i);
        vf_store_n(dx + i, vf_mul(vf_load_n(dy + i, m), vf_select(vf_lt(zero, vf_load_n(y + i, m)), one, zero)), m);
    }
}

#define GRAD_CHUNK 16384 /* the element-wise loops' grain */

/* the element-wise loops (ReluGrad, the optimizers): their operands, a range [lo, hi) an item */
typedef struct {
    const float *a, *b, *c, *d; /* dy, y | p, g[, buf | m, v] */
    float *out0, *out1, *out2;
    const x86_optim_params *o;
} grad_stream_loop;

static void FN(relu_grad_ranges)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const grad_stream_loop *s = (const grad_stream_loop *)ctx;
    (void)worker;
    FN(relu_grad_range)(s->a + lo, s->b + lo, s->out0 + lo, hi - lo);
}

static void FN(relu_grad)(const float *dy, const float *y, float *dx, int64_t n, int threads) {
    grad_stream_loop s = {dy, y, NULL, NULL, dx, NULL, NULL, NULL};
    x86_parallel_ranges(n >= GRAD_PARALLEL_MIN_STREAM ? threads : 1, n, GRAD_CHUNK, FN(relu_grad_ranges), &s);
}

static void FN(sum_to)(const float *x, float *y, int64_t ysize, int ndim, const int64_t *dims,
                       const int64_t *ystrides) {
    memset(y, 0, (size_t)ysize * sizeof(float));
    const int64_t inner = dims[ndim - 1], ys = ystrides[ndim - 1];
    int64_t rows = 1, idx[X86_GRAD_MAX_DIMS] = {0};
    for (int d = 0; d < ndim - 1; ++d) rows *= dims[d];
    int64_t yoff = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float *src = x + r * inner;
        if (ys) { /* a kept inner axis (stride 1 in y): add the row */
            float *dst = y + yoff;
            int64_t i = 0;
            for (; i + VLEN <= inner; i += VLEN) vf_store(dst + i, vf_add(vf_load(dst + i), vf_load(src + i)));
            if (i < inner) {
                const int m = (int)(inner - i);
                vf_store_n(dst + i, vf_add(vf_load_n(dst + i, m), vf_load_n(src + i, m)), m);
            }
        } else {
            y[yoff] += FN(sum_n)(src, inner);
        }
        for (int d = ndim - 2; d >= 0; --d) { /* next row: an odometer over the outer dims */
            yoff += ystrides[d];
            if (++idx[d] < dims[d]) break;
            yoff -= ystrides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

/* -- softmax cross-entropy (double inside: the loss of a batch is one number) ---------------------- */

/* per-class target weight of item (o, s), and whether the item counts; 0 or -1 (class out of range) */
static inline int FN(ce_weights)(const void *target, const x86_ce_geom *g, int64_t o, int64_t s, double *w,
                                 int *keep) {
    const int64_t C = g->C;
    const double eps = g->label_smoothing;
    if (g->target_kind == X86_TARGET_F32) {
        const float *t = (const float *)target;
        for (int64_t c = 0; c < C; ++c) w[c] = (double)t[(o * C + c) * g->inner + s] * (1.0 - eps) + eps / C;
        *keep = 1;
        return 0;
    }
    const int64_t cls = g->target_kind == X86_TARGET_I64 ? ((const int64_t *)target)[o * g->inner + s]
                                                          : ((const int32_t *)target)[o * g->inner + s];
    *keep = cls != g->ignore_index;
    if (*keep && (cls < 0 || cls >= C)) return -1;
    for (int64_t c = 0; c < C; ++c) w[c] = *keep ? (c == cls ? 1.0 - eps : 0.0) + eps / C : 0.0;
    return 0;
}

/* log-sum-exp of logits (o, :, s) */
static inline double FN(ce_lse)(const float *logits, const x86_ce_geom *g, int64_t o, int64_t s) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t c = 0; c < g->C; ++c) {
        const double z = logits[(o * g->C + c) * g->inner + s];
        if (z > m) m = z;
    }
    for (int64_t c = 0; c < g->C; ++c) sum += exp((double)logits[(o * g->C + c) * g->inner + s] - m);
    return m + log(sum);
}

#define CE_STACK 256
static int FN(softmax_ce)(const float *logits, const void *target, float *loss, const x86_ce_geom *g) {
    double wbuf[CE_STACK], *w = g->C <= CE_STACK ? wbuf : (double *)malloc((size_t)g->C * sizeof(double));
    double total = 0.0;
    int64_t count = 0;
    int rc = w ? 0 : -1;
    for (int64_t o = 0; o < g->outer && !rc; ++o)
        for (int64_t s = 0; s < g->inner; ++s) {
            int keep;
            if ((rc = FN(ce_weights)(target, g, o, s, w, &keep)) != 0) break;
            const double lse = FN(ce_lse)(logits, g, o, s);
            double item = 0.0;
            for (int64_t c = 0; c < g->C; ++c)
                if (w[c] != 0.0) item += w[c] * (lse - (double)logits[(o * g->C + c) * g->inner + s]);
            if (g->reduction == X86_RED_NONE) loss[o * g->inner + s] = (float)item;
            total += item;
            count += keep;
        }
    if (w != wbuf) free(w);
    if (g->reduction == X86_RED_MEAN) loss[0] = (float)(total / (double)(count > 0 ? count : 1));
    else if (g->reduction == X86_RED_SUM) loss[0] = (float)total;
    return rc;
}

static int FN(softmax_ce_grad)(const float *dloss, const float *logits, const void *target, float *dlogits,
                               const x86_ce_geom *g) {
    double wbuf[CE_STACK], *w = g->C <= CE_STACK ? wbuf : (double *)malloc((size_t)g->C * sizeof(double));
    if (!w) return -1;
    double scale = dloss[0];
    if (g->reduction == X86_RED_MEAN) { /* the mean divides by the items that count */
        int64_t count = 0;
        for (int64_t o = 0; o < g->outer; ++o)
            for (int64_t s = 0; s < g->inner; ++s) {
                int keep = 1;
                if (g->target_kind != X86_TARGET_F32) {
                    const int64_t cls = g->target_kind == X86_TARGET_I64 ? ((const int64_t *)target)[o * g->inner + s]
                                                                          : ((const int32_t *)target)[o * g->inner + s];
                    keep = cls != g->ignore_index;
                }
                count += keep;
            }
        scale /= (double)(count > 0 ? count : 1);
    }
    int rc = 0;
    for (int64_t o = 0; o < g->outer && !rc; ++o)
        for (int64_t s = 0; s < g->inner; ++s) {
            int keep;
            if ((rc = FN(ce_weights)(target, g, o, s, w, &keep)) != 0) break;
            const double lse = FN(ce_lse)(logits, g, o, s);
            const double sc = g->reduction == X86_RED_NONE ? (double)dloss[o * g->inner + s] : scale;
            double wsum = 0.0;
            for (int64_t c = 0; c < g->C; ++c) wsum += w[c];
            for (int64_t c = 0; c < g->C; ++c) {
                const int64_t at = (o * g->C + c) * g->inner + s;
                dlogits[at] = (float)((exp((double)logits[at] - lse) * wsum - w[c]) * sc);
            }
        }
    if (w != wbuf) free(w);
    return rc;
}

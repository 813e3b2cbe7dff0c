/* Element-wise kernels: broadcasting binary ops, activations, per-channel
 * affine (batch norm) and softmax. Generic over `vf`; included by each isa_*.c. */
#ifndef MNN_X86_ELTWISE_IMPL_H
#define MNN_X86_ELTWISE_IMPL_H

/* below this many elements a kernel runs on one thread: waking others costs more */
#define PARALLEL_MIN 32768

static inline __attribute__((always_inline)) vf vf_binop(const int op, vf a, vf b) {
    switch (op) {
    case X86_ADD: return vf_add(a, b);
    case X86_SUB: return vf_sub(a, b);
    case X86_MUL: return vf_mul(a, b);
    case X86_DIV: return vf_div(a, b);
    /* max/min propagate NaN like numpy: the instructions return b when either is NaN */
    case X86_MAX: return vf_select(vf_isnan(a), a, vf_max(a, b));
    default: return vf_select(vf_isnan(a), a, vf_min(a, b));
    }
}

/* y[i] = a[i*sa] op b[i*sb], sa and sb each 0 or 1 */
static inline __attribute__((always_inline)) void FN(binary_row_op)(const int op, const float *a, int64_t sa,
                                                                    const float *b, int64_t sb, float *y, int64_t n) {
    int64_t i = 0;
    if (sa && sb) {
        for (; i + VLEN <= n; i += VLEN) vf_store(y + i, vf_binop(op, vf_load(a + i), vf_load(b + i)));
        if (i < n) vf_store_n(y + i, vf_binop(op, vf_load_n(a + i, (int)(n - i)), vf_load_n(b + i, (int)(n - i))), (int)(n - i));
    } else if (sa) {
        const vf bv = vf_set1(*b);
        for (; i + VLEN <= n; i += VLEN) vf_store(y + i, vf_binop(op, vf_load(a + i), bv));
        if (i < n) vf_store_n(y + i, vf_binop(op, vf_load_n(a + i, (int)(n - i)), bv), (int)(n - i));
    } else if (sb) {
        const vf av = vf_set1(*a);
        for (; i + VLEN <= n; i += VLEN) vf_store(y + i, vf_binop(op, av, vf_load(b + i)));
        if (i < n) vf_store_n(y + i, vf_binop(op, av, vf_load_n(b + i, (int)(n - i))), (int)(n - i));
    } else {
        const vf v = vf_binop(op, vf_set1(*a), vf_set1(*b));
        for (; i + VLEN <= n; i += VLEN) vf_store(y + i, v);
        if (i < n) vf_store_n(y + i, v, (int)(n - i));
    }
}

static void FN(binary_row)(int op, const float *a, int64_t sa, const float *b, int64_t sb, float *y, int64_t n) {
    switch (op) {
    case X86_ADD: FN(binary_row_op)(X86_ADD, a, sa, b, sb, y, n); break;
    case X86_SUB: FN(binary_row_op)(X86_SUB, a, sa, b, sb, y, n); break;
    case X86_MUL: FN(binary_row_op)(X86_MUL, a, sa, b, sb, y, n); break;
    case X86_DIV: FN(binary_row_op)(X86_DIV, a, sa, b, sb, y, n); break;
    case X86_MAX: FN(binary_row_op)(X86_MAX, a, sa, b, sb, y, n); break;
    default: FN(binary_row_op)(X86_MIN, a, sa, b, sb, y, n); break;
    }
}

static void FN(binary)(int op, const float *a, const float *b, float *y, int ndim, const int64_t *dims,
                       const int64_t *sa, const int64_t *sb, int threads) {
    const int64_t inner = dims[ndim - 1];
    int64_t rows = 1;
    for (int d = 0; d < ndim - 1; ++d) rows *= dims[d];
    if (rows <= 0 || inner <= 0) return;
    /* one piece per row; a long single row is cut into chunks for the threads */
    const int64_t chunk = rows == 1 && inner > PARALLEL_MIN ? (inner + threads - 1) / threads : inner;
    const int64_t per_row = (inner + chunk - 1) / chunk, pieces = rows * per_row;
    PARALLEL_FOR(threads > 1 && rows * inner >= PARALLEL_MIN, t, pieces, {
        const int64_t r = t / per_row, c0 = (t % per_row) * chunk;
        const int64_t n = inner - c0 < chunk ? inner - c0 : chunk;
        int64_t oa = c0 * sa[ndim - 1], ob = c0 * sb[ndim - 1], rest = r;
        for (int d = ndim - 2; d >= 0; --d) { /* row index -> offsets, innermost outer dim first */
            const int64_t i = rest % dims[d];
            rest /= dims[d];
            oa += i * sa[d];
            ob += i * sb[d];
        }
        FN(binary_row)(op, a + oa, sa[ndim - 1], b + ob, sb[ndim - 1], y + r * inner + c0, n);
    });
}

static void FN(activation)(const x86_epilogue *e, const float *x, float *y, int64_t n, int threads) {
    if (n <= 0) return;
    const int64_t chunk = 4096, pieces = (n + chunk - 1) / chunk;
    PARALLEL_FOR(threads > 1 && n >= PARALLEL_MIN / 4, t, pieces, {
        const int64_t s = t * chunk, len = n - s < chunk ? n - s : chunk;
        if (e->act == X86_ACT_NONE) {
            if (x != y) memcpy(y + s, x + s, (size_t)len * sizeof(float));
        } else {
            FN(act_row)(e->act, e->act_alpha, e->act_beta, x + s, y + s, len);
        }
    });
}

static void FN(channel_affine)(const float *x, const float *scale, const float *shift, float *y, int64_t outer,
                               int64_t C, int64_t inner, int threads) {
    if (outer <= 0 || C <= 0 || inner <= 0) return;
    if (inner == 1) { /* channels last: vectors run across channels */
        PARALLEL_FOR(threads > 1 && outer * C >= PARALLEL_MIN, o, outer, {
            const float *xo = x + o * C;
            float *yo = y + o * C;
            int64_t i = 0;
            for (; i + VLEN <= C; i += VLEN) vf_store(yo + i, vf_fma(vf_load(xo + i), vf_load(scale + i), vf_load(shift + i)));
            if (i < C) {
                const int n = (int)(C - i);
                vf_store_n(yo + i, vf_fma(vf_load_n(xo + i, n), vf_load_n(scale + i, n), vf_load_n(shift + i, n)), n);
            }
        });
        return;
    }
    PARALLEL_FOR(threads > 1 && outer * C * inner >= PARALLEL_MIN, r, outer * C, {
        const vf s = vf_set1(scale[r % C]), t = vf_set1(shift[r % C]);
        const float *xr = x + r * inner;
        float *yr = y + r * inner;
        int64_t i = 0;
        for (; i + VLEN <= inner; i += VLEN) vf_store(yr + i, vf_fma(vf_load(xr + i), s, t));
        if (i < inner) vf_store_n(yr + i, vf_fma(vf_load_n(xr + i, (int)(inner - i)), s, t), (int)(inner - i));
    });
}

static inline float FN(row_sum)(const float *x, int64_t n) {
    vf acc = vf_zero();
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) acc = vf_add(acc, vf_load(x + i));
    if (i < n) acc = vf_add(acc, vf_load_n(x + i, (int)(n - i)));
    return vf_hsum(acc);
}

static inline float FN(row_max)(const float *x, int64_t n) {
    vf acc = vf_set1(-INFINITY);
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) acc = vf_max(acc, vf_load(x + i));
    float m = vf_hmax(acc);
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

static void FN(reduce_rows)(const float *x, float *y, int64_t rows, int64_t n, int kind, int threads) {
    PARALLEL_FOR(threads > 1 && rows * n >= PARALLEL_MIN, r, rows, {
        y[r] = kind == 0 ? FN(row_max)(x + r * n, n) : FN(row_sum)(x + r * n, n) / (float)n;
    });
}

/* y = x * s + t over n floats */
static inline void FN(scale_shift)(const float *x, float *y, int64_t n, vf s, vf t) {
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) vf_store(y + i, vf_fma(vf_load(x + i), s, t));
    if (i < n) vf_store_n(y + i, vf_fma(vf_load_n(x + i, (int)(n - i)), s, t), (int)(n - i));
}

/* sum of the first t lanes of v */
static inline float FN(lanes_sum)(vf v, int t) {
    float tmp[VLEN], sum = 0.0f;
    vf_store(tmp, v);
    for (int k = 0; k < t; ++k) sum += tmp[k];
    return sum;
}

/* (log-)softmax of one contiguous row */
static void FN(softmax_row)(const float *x, float *y, int64_t n, int log) {
    const float mx = FN(row_max)(x, n);
    const vf mv = vf_set1(mx);
    vf s = vf_zero();
    float tail = 0.0f;
    int64_t i = 0;
    for (; i + VLEN <= n; i += VLEN) {
        const vf ev = vf_exp(vf_sub(vf_load(x + i), mv));
        if (!log) vf_store(y + i, ev);
        s = vf_add(s, ev);
    }
    if (i < n) {
        const int t = (int)(n - i);
        const vf ev = vf_exp(vf_sub(vf_load_n(x + i, t), mv));
        if (!log) vf_store_n(y + i, ev, t);
        tail = FN(lanes_sum)(ev, t);
    }
    const float total = vf_hsum(s) + tail;
    if (log) FN(scale_shift)(x, y, n, vf_set1(1.0f), vf_set1(-(mx + logf(total))));
    else FN(scale_shift)(y, y, n, vf_set1(1.0f / total), vf_zero());
}

/* (log-)softmax over the middle axis of [axis][inner] for n lanes from j0 */
static void FN(softmax_strided)(const float *x, float *y, int64_t axis, int64_t inner, int64_t j0, int n, int log) {
    vf m = vf_set1(-INFINITY), s = vf_zero();
    for (int64_t a = 0; a < axis; ++a) m = vf_max(m, vf_load_n(x + a * inner + j0, n));
    for (int64_t a = 0; a < axis; ++a) {
        const vf ev = vf_exp(vf_sub(vf_load_n(x + a * inner + j0, n), m));
        if (!log) vf_store_n(y + a * inner + j0, ev, n);
        s = vf_add(s, ev);
    }
    if (log) { /* y = x - (max + log sum), log taken lane by lane */
        float sm[VLEN], mm[VLEN];
        vf_store(sm, s);
        vf_store(mm, m);
        for (int k = 0; k < VLEN; ++k) sm[k] = k < n ? mm[k] + logf(sm[k]) : 0.0f;
        const vf off = vf_load(sm);
        for (int64_t a = 0; a < axis; ++a)
            vf_store_n(y + a * inner + j0, vf_sub(vf_load_n(x + a * inner + j0, n), off), n);
        return;
    }
    const vf inv = vf_div(vf_set1(1.0f), s);
    for (int64_t a = 0; a < axis; ++a) vf_store_n(y + a * inner + j0, vf_mul(vf_load_n(y + a * inner + j0, n), inv), n);
}

static void FN(softmax)(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner, int log, int threads) {
    if (outer <= 0 || axis <= 0 || inner <= 0) return;
    if (inner == 1) {
        PARALLEL_FOR(threads > 1 && outer * axis >= PARALLEL_MIN, o, outer, {
            FN(softmax_row)(x + o * axis, y + o * axis, axis, log);
        });
        return;
    }
    const int64_t vecs = (inner + VLEN - 1) / VLEN;
    PARALLEL_FOR(threads > 1 && outer * axis * inner >= PARALLEL_MIN, t, outer * vecs, {
        const int64_t o = t / vecs, j0 = (t % vecs) * VLEN;
        const int n = (int)(inner - j0 < VLEN ? inner - j0 : VLEN);
        FN(softmax_strided)(x + o * axis * inner, y + o * axis * inner, axis, inner, j0, n, log);
    });
}

/* Each row: mean and variance (two passes), then y = (x - mean) / sqrt(var + eps),
 * scaled and shifted per channel (per_row = C) or per element (layer norm). */
static void FN(normalize_rows)(const float *x, float *y, int64_t rows, int64_t n, float eps, const float *scale,
                               const float *shift, int64_t per_row, int threads) {
    if (rows <= 0 || n <= 0) return;
    PARALLEL_FOR(threads > 1 && rows * n >= PARALLEL_MIN, r, rows, {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        const float mean = FN(row_sum)(xr, n) / (float)n;
        const vf mv = vf_set1(mean);
        vf acc = vf_zero();
        float tail = 0.0f;
        int64_t i = 0;
        for (; i + VLEN <= n; i += VLEN) {
            const vf d = vf_sub(vf_load(xr + i), mv);
            acc = vf_fma(d, d, acc);
        }
        if (i < n) {
            const int t = (int)(n - i);
            const vf d = vf_sub(vf_load_n(xr + i, t), mv);
            tail = FN(lanes_sum)(vf_mul(d, d), t);
        }
        const float inv = 1.0f / sqrtf((vf_hsum(acc) + tail) / (float)n + eps);
        if (per_row) {
            const int64_t c = r % per_row;
            const float k = inv * (scale ? scale[c] : 1.0f), b = shift ? shift[c] : 0.0f;
            FN(scale_shift)(xr, yr, n, vf_set1(k), vf_set1(b - mean * k));
            continue;
        }
        FN(scale_shift)(xr, yr, n, vf_set1(inv), vf_set1(-mean * inv));
        if (scale || shift) { /* layer norm: per-element affine */
            for (int64_t j = 0; j < n; j += VLEN) {
                const int t = (int)(n - j < VLEN ? n - j : VLEN);
                vf v = vf_load_n(yr + j, t);
                if (scale) v = vf_mul(v, vf_load_n(scale + j, t));
                if (shift) v = vf_add(v, vf_load_n(shift + j, t));
                vf_store_n(yr + j, v, t);
            }
        }
    });
}

#endif

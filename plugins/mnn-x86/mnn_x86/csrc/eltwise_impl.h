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
    case X86_MAX: return vf_max_nan(a, b); /* NaN propagates, as in numpy (vmath_impl.h) */
    default: return vf_min_nan(a, b);
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

/* the light loops run as ranges on the thread pool (x86_parallel_ranges): a
 * range needs at least half of PARALLEL_MIN floats to be worth a thread */
static inline int64_t FN(grain_for)(int64_t floats_per_index) {
    const int64_t g = (PARALLEL_MIN / 2) / (floats_per_index > 0 ? floats_per_index : 1);
    return g > 1 ? g : 1;
}

typedef struct {
    int op, ndim;
    const float *a, *b;
    float *y;
    const int64_t *dims, *sa, *sb;
    int64_t inner, chunk, per_row;
} FN(binary_job);

static void FN(binary_range)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const FN(binary_job) *J = (const FN(binary_job) *)ctx;
    const int ndim = J->ndim;
    const int64_t *dims = J->dims, *sa = J->sa, *sb = J->sb;
    (void)worker;
    for (int64_t t = lo; t < hi; ++t) {
        const int64_t r = t / J->per_row, c0 = (t % J->per_row) * J->chunk;
        const int64_t n = J->inner - c0 < J->chunk ? J->inner - c0 : J->chunk;
        int64_t oa = c0 * sa[ndim - 1], ob = c0 * sb[ndim - 1], rest = r;
        for (int d = ndim - 2; d >= 0; --d) { /* row index -> offsets, innermost outer dim first */
            const int64_t i = rest % dims[d];
            rest /= dims[d];
            oa += i * sa[d];
            ob += i * sb[d];
        }
        FN(binary_row)(J->op, J->a + oa, sa[ndim - 1], J->b + ob, sb[ndim - 1], J->y + r * J->inner + c0, n);
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
    FN(binary_job) J = {op, ndim, a, b, y, dims, sa, sb, inner, chunk, (inner + chunk - 1) / chunk};
    x86_parallel_ranges(threads, rows * J.per_row, FN(grain_for)(chunk), FN(binary_range), &J);
}

typedef struct {
    const x86_epilogue *e;
    const float *x;
    float *y;
    int64_t n;
} FN(act_job);

#define ACT_CHUNK 4096
static void FN(act_range)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const FN(act_job) *J = (const FN(act_job) *)ctx;
    (void)worker;
    for (int64_t t = lo; t < hi; ++t) {
        const int64_t s = t * ACT_CHUNK, len = J->n - s < ACT_CHUNK ? J->n - s : ACT_CHUNK;
        if (J->e->act == MNN_ACT_NONE) {
            if (J->x != J->y) memcpy(J->y + s, J->x + s, (size_t)len * sizeof(float));
        } else {
            FN(act_row)(J->e->act, J->e->act_alpha, J->e->act_beta, J->x + s, J->y + s, len);
        }
    }
}

static void FN(activation)(const x86_epilogue *e, const float *x, float *y, int64_t n, int threads) {
    if (n <= 0) return;
    FN(act_job) J = {e, x, y, n};
    /* activations cost more per float than a copy: a quarter of the element-wise threshold */
    const int64_t grain = (PARALLEL_MIN / 8 + ACT_CHUNK - 1) / ACT_CHUNK;
    x86_parallel_ranges(threads, (n + ACT_CHUNK - 1) / ACT_CHUNK, grain, FN(act_range), &J);
}

typedef struct {
    const float *x, *scale, *shift;
    float *y;
    int64_t C, inner;
} FN(affine_job);

static void FN(affine_last_range)(void *ctx, int64_t lo, int64_t hi, int worker) { /* channels last */
    const FN(affine_job) *J = (const FN(affine_job) *)ctx;
    const int64_t C = J->C;
    (void)worker;
    for (int64_t o = lo; o < hi; ++o) {
        const float *xo = J->x + o * C, *scale = J->scale, *shift = J->shift;
        float *yo = J->y + o * C;
        int64_t i = 0;
        for (; i + VLEN <= C; i += VLEN) vf_store(yo + i, vf_fma(vf_load(xo + i), vf_load(scale + i), vf_load(shift + i)));
        if (i < C) {
            const int n = (int)(C - i);
            vf_store_n(yo + i, vf_fma(vf_load_n(xo + i, n), vf_load_n(scale + i, n), vf_load_n(shift + i, n)), n);
        }
    }
}

static void FN(affine_rows_range)(void *ctx, int64_t lo, int64_t hi, int worker) { /* one row per channel */
    const FN(affine_job) *J = (const FN(affine_job) *)ctx;
    const int64_t inner = J->inner;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) {
        const vf s = vf_set1(J->scale[r % J->C]), t = vf_set1(J->shift[r % J->C]);
        const float *xr = J->x + r * inner;
        float *yr = J->y + r * inner;
        int64_t i = 0;
        for (; i + VLEN <= inner; i += VLEN) vf_store(yr + i, vf_fma(vf_load(xr + i), s, t));
        if (i < inner) vf_store_n(yr + i, vf_fma(vf_load_n(xr + i, (int)(inner - i)), s, t), (int)(inner - i));
    }
}

static void FN(channel_affine)(const float *x, const float *scale, const float *shift, float *y, int64_t outer,
                               int64_t C, int64_t inner, int threads) {
    if (outer <= 0 || C <= 0 || inner <= 0) return;
    FN(affine_job) J = {x, scale, shift, y, C, inner};
    if (inner == 1) x86_parallel_ranges(threads, outer, FN(grain_for)(C), FN(affine_last_range), &J);
    else x86_parallel_ranges(threads, outer * C, FN(grain_for)(inner), FN(affine_rows_range), &J);
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

typedef struct {
    const float *x;
    float *y;
    int64_t n;
    int kind;
} FN(reduce_job);

static void FN(reduce_range)(void *ctx, int64_t lo, int64_t hi, int worker) {
    const FN(reduce_job) *J = (const FN(reduce_job) *)ctx;
    (void)worker;
    for (int64_t r = lo; r < hi; ++r)
        J->y[r] = J->kind == 0 ? FN(row_max)(J->x + r * J->n, J->n) : FN(row_sum)(J->x + r * J->n, J->n) / (float)J->n;
}

static void FN(reduce_rows)(const float *x, float *y, int64_t rows, int64_t n, int kind, int threads) {
    FN(reduce_job) J = {x, y, n, kind};
    x86_parallel_ranges(threads, rows, FN(grain_for)(n), FN(reduce_range), &J);
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

typedef struct {
    const float *x;
    float *y;
    int64_t axis, inner, vecs;
    int log;
} FN(softmax_args);

static void FN(softmax_one_row)(void *ctx, int64_t o) {
    const FN(softmax_args) *g = (const FN(softmax_args) *)ctx;
    FN(softmax_row)(g->x + o * g->axis, g->y + o * g->axis, g->axis, g->log);
}

/* lanes [j0, j0 + VLEN) of the inner dims of outer index o, for item t = o * vecs + j0 / VLEN */
static void FN(softmax_one_strip)(void *ctx, int64_t t) {
    const FN(softmax_args) *g = (const FN(softmax_args) *)ctx;
    const int64_t o = t / g->vecs, j0 = (t % g->vecs) * VLEN;
    const int n = (int)(g->inner - j0 < VLEN ? g->inner - j0 : VLEN);
    FN(softmax_strided)(g->x + o * g->axis * g->inner, g->y + o * g->axis * g->inner, g->axis, g->inner, j0, n, g->log);
}

static void FN(softmax)(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner, int log, int threads) {
    if (outer <= 0 || axis <= 0 || inner <= 0) return;
    FN(softmax_args) g = {x, y, axis, inner, (inner + VLEN - 1) / VLEN, log};
    if (inner == 1) x86_for_each(outer * axis >= PARALLEL_MIN, threads, outer, FN(softmax_one_row), &g);
    else x86_for_each(outer * axis * inner >= PARALLEL_MIN, threads, outer * g.vecs, FN(softmax_one_strip), &g);
}

/* Each row: mean and variance (two passes), then y = (x - mean) / sqrt(var + eps),
 * scaled and shifted per channel (per_row = C) or per element (layer norm). */
typedef struct {
    const float *x;
    float *y;
    int64_t n, per_row;
    float eps;
    const float *scale, *shift;
} FN(norm_args);

static void FN(normalize_row)(void *ctx, int64_t r) {
    const FN(norm_args) *g = (const FN(norm_args) *)ctx;
    const int64_t n = g->n, per_row = g->per_row;
    const float eps = g->eps, *scale = g->scale, *shift = g->shift;
    const float *xr = g->x + r * n;
    float *yr = g->y + r * n;
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
        return;
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
}

static void FN(normalize_rows)(const float *x, float *y, int64_t rows, int64_t n, float eps, const float *scale,
                               const float *shift, int64_t per_row, int threads) {
    if (rows <= 0 || n <= 0) return;
    FN(norm_args) g = {x, y, n, per_row, eps, scale, shift};
    x86_for_each(rows * n >= PARALLEL_MIN, threads, rows, FN(normalize_row), &g);
}

#endif

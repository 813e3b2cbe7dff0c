/* The feature-wise ops: Scaler, Imputer, Binarizer (element i takes the value of feature
 * i % width) and Normalizer (one row of the last axis at a time). Cut into ranges for the pool. */
#include <math.h>

#include "ml.h"

#define GRAIN 16384 /* elements: fewer per range are not worth a thread */

static int64_t numel(const mnn_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
    return n;
}

typedef struct {
    const x86_feature_state *s;
    const void *x;
    int32_t dtype;
    void *y;
} feature_job;

/* Scaler in float32 (float32 or integer input, ints rounded to float32 first) */
X86_CLONES static void scale_f32(const x86_feature_state *s, const void *x, int32_t dtype, float *y, int64_t lo,
                                 int64_t hi) {
    const int64_t w = s->width;
    if (dtype == MNN_FLOAT32) {
        const float *xx = (const float *)x;
        for (int64_t i = lo; i < hi; ++i) y[i] = (xx[i] - (float)s->a[i % w]) * (float)s->b[i % w];
        return;
    }
    for (int64_t i = lo; i < hi; ++i) y[i] = ((float)ml_load(x, dtype, i) - (float)s->a[i % w]) * (float)s->b[i % w];
}

static void scaler_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const feature_job *j = (const feature_job *)ctx;
    const x86_feature_state *s = j->s;
    float *y = (float *)j->y;
    (void)worker;
    if (s->f32) {
        scale_f32(s, j->x, j->dtype, y, lo, hi);
        return;
    }
    const double *x = (const double *)j->x;  /* float64 input: in float64 */
    for (int64_t i = lo; i < hi; ++i) y[i] = (float)((x[i] - s->a[i % s->width]) * s->b[i % s->width]);
}

static void imputer_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const feature_job *j = (const feature_job *)ctx;
    const x86_feature_state *s = j->s;
    const double r = s->b[0];
    (void)worker;
    for (int64_t i = lo; i < hi; ++i) {
        const double v = j->dtype == MNN_FLOAT64 ? ((const double *)j->x)[i] : ((const float *)j->x)[i];
        const int hit = v == r || (v != v && r != r);
        const double out = hit ? s->a[i % s->width] : v;
        if (j->dtype == MNN_FLOAT64)
            ((double *)j->y)[i] = out;
        else
            ((float *)j->y)[i] = (float)out;
    }
}

static void binarizer_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const feature_job *j = (const feature_job *)ctx;
    const double t = j->s->threshold;
    (void)worker;
    if (j->dtype == MNN_FLOAT64) {
        for (int64_t i = lo; i < hi; ++i) ((double *)j->y)[i] = ((const double *)j->x)[i] > t;
        return;
    }
    for (int64_t i = lo; i < hi; ++i) ((float *)j->y)[i] = ((const float *)j->x)[i] > (float)t;
}

static int feature_run(void *state, const mnn_tensor *ins, mnn_tensor *outs, x86_range_fn fn) {
    const x86_feature_state *s = (const x86_feature_state *)state;
    feature_job j = {s, ins[0].data, ins[0].dtype, outs[0].data};
    const int64_t n = numel(&ins[0]);
    if (n) x86_pool->ranges(s->op.threads, n, GRAIN, fn, &j);
    return 0;
}

int x86_scaler_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in;
    (void)n_out;
    return feature_run(state, ins, outs, scaler_range);
}

int x86_imputer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in;
    (void)n_out;
    return feature_run(state, ins, outs, imputer_range);
}

int x86_binarizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in;
    (void)n_out;
    return feature_run(state, ins, outs, binarizer_range);
}

/* -- Normalizer ----------------------------------------------------------------------------------- */

typedef struct {
    const x86_normalizer_state *s;
    const mnn_tensor *x;
    float *y;
    int64_t width;
} norm_job;

/* x * x in the input's own type, then float32 (the reference's sq) */
static float square(const void *x, int32_t dtype, int64_t i) {
    switch (dtype) {
    case MNN_FLOAT64: return (float)(((const double *)x)[i] * ((const double *)x)[i]);
    case MNN_INT64: return (float)(((const int64_t *)x)[i] * ((const int64_t *)x)[i]);
    case MNN_INT32: return (float)(((const int32_t *)x)[i] * ((const int32_t *)x)[i]);
    default: return ((const float *)x)[i] * ((const float *)x)[i];
    }
}

/* one row of C: the norm in float32 (summed in double: within an ulp of numpy's pairwise sum) */
static void normalize_row(const norm_job *j, int64_t r) {
    const int64_t C = j->width, at = r * C;
    const void *x = j->x->data;
    const int32_t dtype = j->x->dtype;
    float *y = j->y + at;
    double acc = 0;
    if (j->s->norm == 0) {
        float d = (float)ml_load(x, dtype, at);
        for (int64_t c = 1; c < C; ++c) d = fmaxf(d, (float)ml_load(x, dtype, at + c));
        for (int64_t c = 0; c < C; ++c) y[c] = (float)ml_load(x, dtype, at + c) / (d == 0 ? 1.0f : d);
    } else if (j->s->norm == 1) {
        for (int64_t c = 0; c < C; ++c) acc += fabsf((float)ml_load(x, dtype, at + c));
        const float d = (float)acc;
        for (int64_t c = 0; c < C; ++c) y[c] = (float)ml_load(x, dtype, at + c) / (d == 0 ? 1.0f : d);
    } else {
        for (int64_t c = 0; c < C; ++c) acc += square(x, dtype, at + c);
        const float d = (float)acc;
        for (int64_t c = 0; c < C; ++c) {
            const float v = (float)ml_load(x, dtype, at + c);
            y[c] = d == 0 ? v : sqrtf(square(x, dtype, at + c) / d) * (v < 0 ? -1.0f : 1.0f);
        }
    }
}

static void normalizer_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    (void)worker;
    for (int64_t r = lo; r < hi; ++r) normalize_row((const norm_job *)ctx, r);
}

int x86_normalizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    const x86_normalizer_state *s = (const x86_normalizer_state *)state;
    (void)n_in;
    (void)n_out;
    const int64_t width = ins[0].shape[ins[0].ndim - 1], n = numel(&ins[0]);
    if (n == 0) return 0;
    norm_job j = {s, &ins[0], (float *)outs[0].data, width};
    x86_pool->ranges(s->op.threads, n / width, GRAIN / width + 1, normalizer_range, &j);
    return 0;
}

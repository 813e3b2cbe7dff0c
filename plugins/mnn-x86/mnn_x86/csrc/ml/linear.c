/* LinearClassifier and LinearRegressor: per row the scores x @ coefficients.T + intercepts in
 * float64 (the reference's type; the rows read as float32 first), the label of the best and the
 * post transform; rows cut into ranges for the pool. */
#include "ml.h"

typedef struct {
    x86_linear_state *s;
    const mnn_tensor *x;
    int64_t *y;
    float *z;
} linear_job;

static void scores(const x86_linear_state *s, const double *x, double *out) {
    const int64_t F = s->features;
    for (int32_t c = 0; c < s->k; ++c) {
        const double *w = s->coef + c * F;
        double acc = 0;
        for (int64_t f = 0; f < F; ++f) acc += x[f] * w[f];
        out[c] = s->has_intercepts ? acc + s->intercepts[c] : acc;
    }
}

/* labels and scores of a classifier row (ml.py's _linear_classifier) */
static void classify(const x86_linear_state *s, double *sc, int64_t *y, float *z) {
    if (s->k == 1) {  /* one score per row: its sign picks the label, and it is the second class's score */
        const double v = sc[0];
        *y = v > 0 ? s->labels[1] : s->labels[0];
        if (s->transform == ML_PROBIT) {
            z[0] = ml_probit((float)v);
            z[1] = 0;
        } else {
            const double hi = s->transform == ML_LOGISTIC ? ml_logistic(v) : v;
            z[0] = (float)(s->transform == ML_LOGISTIC ? 1.0 - hi : 1.0 - v);
            z[1] = (float)hi;
        }
        return;
    }
    int32_t best = 0;
    for (int32_t c = 1; c < s->k; ++c)
        if (sc[c] > sc[best]) best = c;
    *y = s->n_labels ? s->labels[best] : best;
    ml_post_transform(sc, s->k, s->transform);
    for (int32_t c = 0; c < s->k; ++c) z[c] = (float)sc[c];
}

static void regress(const x86_linear_state *s, double *sc, float *z) {
    if (s->k == 1)
        z[0] = s->transform == ML_PROBIT ? ml_probit((float)sc[0]) : (float)sc[0];
    else {
        ml_post_transform(sc, s->k, s->transform);
        for (int32_t c = 0; c < s->k; ++c) z[c] = (float)sc[c];
    }
}

static void linear_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    const linear_job *j = (const linear_job *)ctx;
    const x86_linear_state *s = j->s;
    const int64_t F = s->features, width = s->classifier && s->k == 1 ? 2 : s->k;
    double *x = (double *)(s->scratch + worker * s->scratch_stride), *sc = x + F;
    for (int64_t r = lo; r < hi; ++r) {
        for (int64_t f = 0; f < F; ++f) x[f] = ml_load(j->x->data, j->x->dtype, r * F + f);
        scores(s, x, sc);
        if (s->classifier)
            classify(s, sc, j->y + r, j->z + r * width);
        else
            regress(s, sc, j->z + r * width);
    }
}

int x86_linear_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_linear_state *s = (x86_linear_state *)state;
    int64_t rows, features;
    (void)n_in;
    (void)n_out;
    ml_rows(&ins[0], &rows, &features);
    if (features != s->features) {
        s->op.error = "linear model: the input's feature count differs from the one prepared for";
        return 1;
    }
    linear_job j = {s, &ins[0], s->classifier ? (int64_t *)outs[0].data : NULL,
                    (float *)outs[s->classifier ? 1 : 0].data};
    const int64_t work = (features + 1) * s->k;
    x86_pool->ranges(s->op.threads, rows, work >= 16384 ? 1 : 16384 / work + 1, linear_range, &j);
    return 0;
}

/* TreeEnsembleClassifier / TreeEnsembleRegressor of mnn-arm (ml.h), and LinearClassifier (move.h),
 * which shares their post transforms. Tree rows go in blocks of
 * ARM_ML_BLOCK with the trees in the outer loop (a tree's nodes are read from cache for the whole
 * block); blocks are split over the session's threads. The post steps (base values, the two-class
 * cases, transforms) follow mnn_core/ops/ml_trees.py line by line. Gathers of nodes and features
 * leave nothing for NEON lanes: the walk is plain C, made free of mispredicted branches instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ml.h"
#include "move.h"
#include "parallel.h"

/* v rounded to the scores' type: an add or divide done in double and rounded is the float32 one */
static inline double rt(double v, int f32) { return f32 ? (double)(float)v : v; }

/* sqrt(2) erfinv(2p - 1) with ONNX Runtime's erfinv (Winitzki, a = 0.147) in float32, as the reference */
static float probit(float p) {
    const float x = 2.0f * p - 1.0f, sign = x < 0.0f ? -1.0f : 1.0f;
    const float ln = logf((1.0f - x) * (1.0f + x));
    const float a = (float)(2.0 / (3.14159265358979323846 * 0.147)) + 0.5f * ln, b = ln / 0.147f;
    return (float)sqrt(2.0) * sign * sqrtf(-a + sqrtf(a * a - b));
}

static double logistic(double v) {
    const double e = 1.0 / (1.0 + exp(-fabs(v)));
    return v < 0 ? 1.0 - e : e;
}

/* k scores in place; SOFTMAX_ZERO leaves (near-)zero scores out of the sum as s * exp(-top) */
static void post_transform(double *s, int32_t k, int32_t how) {
    if (how == ARM_ML_LOGISTIC) {
        for (int32_t c = 0; c < k; ++c) s[c] = logistic(s[c]);
    } else if (how == ARM_ML_PROBIT) {
        for (int32_t c = 0; c < k; ++c) s[c] = probit((float)s[c]);
    } else if (how == ARM_ML_SOFTMAX || how == ARM_ML_SOFTMAX_ZERO) {
        const int zero = how == ARM_ML_SOFTMAX_ZERO;
        double top = s[0], sum = 0.0;
        for (int32_t c = 1; c < k; ++c) top = s[c] > top ? s[c] : top;
        for (int32_t c = 0; c < k; ++c) {
            const int kept = !zero || fabs(s[c]) > 1e-7;
            s[c] = kept ? exp(s[c] - top) : s[c] * exp(-top);
            if (kept) sum += s[c];
        }
        for (int32_t c = 0; c < k; ++c) s[c] /= sum;
    }
}

static inline int branch(const arm_ml_node *nd, double v) {
    int go;
    switch (nd->mode) {
    case ARM_ML_LEQ: go = v <= nd->threshold; break;
    case ARM_ML_LT: go = v < nd->threshold; break;
    case ARM_ML_GTE: go = v >= nd->threshold; break;
    case ARM_ML_GT: go = v > nd->threshold; break;
    case ARM_ML_EQ: go = v == nd->threshold; break;
    default: go = v != nd->threshold; break;
    }
    return go | (nd->missing_true & (v != v));
}

/* the true child if go, else the false one, by a mask: as a branch the data would mispredict it half the time */
static inline int32_t child(const arm_ml_node *nd, int32_t go) { return nd->no ^ ((nd->yes ^ nd->no) & -go); }

/* each row of the block from tree t's root to its leaf: pos[r] ends at the leaf's node */
static void walk(const arm_tree_state *s, int32_t t, const double *xb, int64_t n, int32_t *pos) {
    const arm_ml_node *nodes = s->nodes;
    const int64_t F = s->features;
    for (int32_t d = 0; d < s->depths[t]; ++d) {
        if (s->all_leq) {
            for (int64_t r = 0; r < n; ++r) {
                const arm_ml_node *nd = &nodes[pos[r]];
                const double v = xb[r * F + nd->feature];
                pos[r] = child(nd, (v <= nd->threshold) | (nd->missing_true & (v != v)));
            }
        } else {
            for (int64_t r = 0; r < n; ++r) {
                const arm_ml_node *nd = &nodes[pos[r]];
                pos[r] = child(nd, branch(nd, xb[r * F + nd->feature]));
            }
        }
    }
}

/* one leaf's weights into a row's scores by the aggregate function */
static inline void aggregate(const arm_tree_state *s, double *score, uint8_t *has, int32_t leaf) {
    const double *w = s->weights + (int64_t)leaf * s->k;
    const uint8_t *h = s->has + (int64_t)leaf * s->k;
    for (int32_t c = 0; c < s->k; ++c) {
        if (s->aggregate == ARM_ML_SUM || s->aggregate == ARM_ML_AVERAGE) {
            score[c] = rt(score[c] + w[c], s->f32);
        } else {
            const int better = s->aggregate == ARM_ML_MIN ? w[c] < score[c] : w[c] > score[c];
            if (h[c] && (!has[c] || better)) score[c] = w[c];
        }
        has[c] |= h[c];
    }
}

/* ONNX Runtime's expansion of one score v into two classes (ml.py's _one_score) */
static void one_score(double v, int32_t how, int extra, float *z) {
    if (how == ARM_ML_PROBIT) {
        z[0] = probit((float)v), z[1] = 0.0f;
        return;
    }
    double lo = extra >= 2 ? -v : 1.0 - v, hi = v;
    if (how == ARM_ML_LOGISTIC) {
        hi = logistic(v);
        lo = 1.0 - hi;
    }
    z[0] = (float)(extra < 0 ? v : lo);
    z[1] = (float)(extra < 0 ? 0.0 : hi);
}

/* two classes (ml_trees.py's _binary_scores) */
static void finish_binary(const arm_tree_state *s, const double *score, const uint8_t *has, int64_t *y, float *z) {
    const int f = s->f32, h0 = has[0], h1 = has[1];
    double s0 = score[0], s1 = score[1];
    int two = 1, extra = -1;
    if (s->n_base == 2) {
        const double t = rt(s->base[1] + s0, f);
        s1 = h1 ? t : rt(s1 + s->base[1], f);
        s0 = h1 ? -t : rt(s0 + s->base[0], f);
    } else if (s->n_base == 1) {
        s0 = rt(s0 + s->base[0], f);
        two = h1;
    } else if (s->n_base == 0) {
        extra = 3;
        two = h1;
    }
    const double pos = two && h1 ? s1 : (h0 ? s0 : 0.0);
    if (s->binary) {
        const int win = pos > (s->positive ? 0.5 : 0.0);
        extra = (win ? 0 : 1) + (s->positive ? 0 : 2);
        *y = win ? s->labels[1] : s->labels[0];
    } else {
        *y = pos > 0; /* (ONNX Runtime gives 1 or 0 here, not the labels) */
    }
    const double v0 = h0 ? s0 : 0.0, v1 = h1 ? s1 : 0.0;
    if (!two) {
        one_score(v0, s->post, extra, z);
        return;
    }
    double both[2] = {v0, v1};
    post_transform(both, 2, s->post);
    z[0] = (float)both[0], z[1] = (float)both[1];
}

/* three classes or more: base values, the best voted class's label, the transformed scores */
static void finish_classes(const arm_tree_state *s, double *score, uint8_t *has, int64_t *y, float *z) {
    const int32_t k = s->k, nb = s->n_base < k ? s->n_base : k;
    for (int32_t c = 0; c < nb; ++c) {
        score[c] = rt(score[c] + s->base[c], s->f32);
        has[c] = 1;
    }
    int32_t best = 0;
    double top = -INFINITY;
    for (int32_t c = 0; c < k; ++c) {
        const double v = has[c] ? score[c] : -INFINITY;
        if (v > top) top = v, best = c;
        score[c] = has[c] ? score[c] : 0.0;
    }
    *y = s->labels[best];
    post_transform(score, k, s->post);
    for (int32_t c = 0; c < k; ++c) z[c] = (float)score[c];
}

static void finish_regressor(const arm_tree_state *s, double *score, const uint8_t *has, float *z) {
    const int32_t k = s->k;
    if (k == 1) { /* one target: a single base value is its origin; PROBIT is the only transform */
        const double v = s->n_base == 1 ? rt(score[0] + s->base[0], s->f32) : score[0];
        z[0] = s->post == ARM_ML_PROBIT ? probit((float)v) : (float)v;
        return;
    }
    for (int32_t c = 0; c < k; ++c) {
        if (s->n_base == k) score[c] = rt(score[c] + s->base[c], s->f32);
        score[c] = has[c] ? score[c] : 0.0; /* (no vote: 0, base or not) */
    }
    post_transform(score, k, s->post);
    for (int32_t c = 0; c < k; ++c) z[c] = (float)score[c];
}

typedef struct tree_job {
    const arm_tree_state *s;
    const mnn_tensor *x;
    int64_t rows;
    int64_t *y;
    float *z;
} tree_job;

/* element i of the input as the reference reads rows: integers through float32 */
static inline double load(const mnn_tensor *t, int64_t i) {
    const void *p = arm_data(t);
    switch (t->dtype) {
    case MNN_FLOAT64: return ((const double *)p)[i];
    case MNN_INT64: return (float)((const int64_t *)p)[i];
    case MNN_INT32: return (float)((const int32_t *)p)[i];
    default: return ((const float *)p)[i];
    }
}

static void tree_block(const tree_job *j, int64_t r0, int slice) {
    const arm_tree_state *s = j->s;
    const int32_t k = s->k;
    const int64_t F = s->features, n = j->rows - r0 < ARM_ML_BLOCK ? j->rows - r0 : ARM_ML_BLOCK;
    char *scratch = s->scratch + slice * s->scratch_stride;
    double *xb = (double *)scratch, *score = xb + ARM_ML_BLOCK * F;
    int32_t *pos = (int32_t *)(score + ARM_ML_BLOCK * k);
    uint8_t *has = (uint8_t *)(pos + ARM_ML_BLOCK);
    for (int64_t i = 0; i < n * F; ++i) xb[i] = load(j->x, r0 * F + i);
    memset(score, 0, sizeof(double) * (size_t)(n * k));
    memset(has, 0, (size_t)(n * k));
    for (int32_t t = 0; t < s->n_trees; ++t) {
        for (int64_t r = 0; r < n; ++r) pos[r] = s->roots[t];
        walk(s, t, xb, n, pos);
        for (int64_t r = 0; r < n; ++r) aggregate(s, score + r * k, has + r * k, s->nodes[pos[r]].leaf);
    }
    for (int64_t r = 0; r < n; ++r) {
        double *sc = score + r * k;
        uint8_t *h = has + r * k;
        if (s->aggregate == ARM_ML_AVERAGE)
            for (int32_t c = 0; c < k; ++c) sc[c] = rt(sc[c] / s->n_trees, s->f32);
        if (!s->classifier)
            finish_regressor(s, sc, h, j->z + (r0 + r) * k);
        else if (k == 2)
            finish_binary(s, sc, h, j->y + r0 + r, j->z + (r0 + r) * k);
        else
            finish_classes(s, sc, h, j->y + r0 + r, j->z + (r0 + r) * k);
    }
}

static void tree_blocks(void *ctx, int64_t b, int64_t e, int tid) {
    for (int64_t i = b; i < e; ++i) tree_block((const tree_job *)ctx, i * ARM_ML_BLOCK, tid);
}

int64_t arm_tree_scratch_bytes(int64_t features, int32_t k) {
    const int64_t bytes = ARM_ML_BLOCK * (8 * features + 8 * k + 4 + k);
    return (bytes + 63) / 64 * 64;
}

int arm_tree_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    arm_tree_state *s = (arm_tree_state *)state;
    const mnn_tensor *x = &ins[0];
    const int64_t rows = x->ndim == 1 ? 1 : x->shape[0], features = x->shape[x->ndim - 1];
    if (features != s->features) {
        s->op.error = "tree ensemble: the input's feature count differs from the one it was prepared for";
        return 1;
    }
    tree_job j = {s, x, rows, s->classifier ? (int64_t *)arm_data(&outs[0]) : NULL,
                  (float *)arm_data(&outs[s->classifier ? 1 : 0])};
    const int64_t blocks = (rows + ARM_ML_BLOCK - 1) / ARM_ML_BLOCK;
    /* a part is worth a thread from about 16K node visits */
    const double work = (double)rows * (double)s->n_nodes / 16384.0;
    int parts = arm_threads(s) < s->slices ? arm_threads(s) : s->slices;
    parts = work < 2.0 ? 1 : (work < parts ? (int)work : parts);
    arm_parallel(parts, blocks, 1, tree_blocks, &j);
    return 0;
}

int arm_linclass_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)n_in, (void)n_out;
    const arm_linclass_state *s = (const arm_linclass_state *)state;
    int64_t *label = (int64_t *)arm_data(&outs[0]);
    float *z = (float *)arm_data(&outs[1]);
    const int64_t K = s->k, F = s->features, zc = K > 1 ? K : 2;
    double *sc = s->work;
    for (int64_t r = 0; r < s->rows; ++r) {
        for (int64_t c = 0; c < K; ++c) {
            double acc = 0.0;
            for (int64_t f = 0; f < F; ++f) acc += load(&ins[0], r * F + f) * s->coef[c * F + f];
            sc[c] = acc + s->intercepts[c];
        }
        float *zr = z + r * zc;
        if (K == 1) { /* the sign decides; the two classes' scores are (1 - v, v), transformed */
            label[r] = sc[0] > 0 ? s->labels[1] : s->labels[0];
            one_score(sc[0], s->post, 0, zr);
            continue;
        }
        int64_t best = 0;
        for (int64_t c = 1; c < K; ++c) best = sc[c] > sc[best] ? c : best;
        label[r] = s->has_labels ? s->labels[best] : best;
        post_transform(sc, (int32_t)K, s->post);
        for (int64_t c = 0; c < K; ++c) zr[c] = (float)sc[c];
    }
    return 0;
}

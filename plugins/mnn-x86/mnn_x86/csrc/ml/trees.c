/* TreeEnsembleClassifier and TreeEnsembleRegressor: each row walks every tree to a leaf and the
 * leaves' weights are aggregated tree by tree, in float32 (float64 for float64 input) as the
 * reference and ONNX Runtime add them. Rows go in blocks of ML_BLOCK with the trees in the outer
 * loop, so a tree's nodes are read from cache for a whole block; blocks are cut into ranges for
 * the pool. The post steps (base values, the two-class special cases, transforms) follow
 * mnn_core/ops/ml_trees.py line by line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ml.h"

/* v rounded to the scores' type: an add or divide done in double and rounded is the float32 one */
static inline double rt(double v, int f32) { return f32 ? (double)(float)v : v; }

static inline int branch(const ml_node *nd, double v) {
    int go;
    switch (nd->mode) {
    case ML_LEQ: go = v <= nd->threshold; break;
    case ML_LT: go = v < nd->threshold; break;
    case ML_GTE: go = v >= nd->threshold; break;
    case ML_GT: go = v > nd->threshold; break;
    case ML_EQ: go = v == nd->threshold; break;
    default: go = v != nd->threshold; break;
    }
    return go | (nd->missing_true & (v != v));
}

/* the true child if go, else the false one, by a mask: GCC makes `go ? yes : no` a branch here, which
 * the data mispredict half the time */
static inline int32_t child(const ml_node *nd, int32_t go) { return nd->no ^ ((nd->yes ^ nd->no) & -go); }

/* each row of the block from the root of tree t down to its leaf: pos[r] ends at the leaf's node */
static void walk_generic(const x86_tree_state *s, int32_t t, const double *xb, int64_t n, int32_t *pos) {
    const ml_node *nodes = s->nodes;
    for (int32_t d = 0; d < s->depths[t]; ++d)
        for (int64_t r = 0; r < n; ++r) {
            const ml_node *nd = &nodes[pos[r]];
            pos[r] = child(nd, branch(nd, xb[r * s->features + nd->feature]));
        }
}

X86_CLONES static void walk_leq(const x86_tree_state *s, int32_t t, const double *xb, int64_t n, int32_t *pos) {
    const ml_node *nodes = s->nodes;
    for (int32_t d = 0; d < s->depths[t]; ++d)
        for (int64_t r = 0; r < n; ++r) {
            const ml_node *nd = &nodes[pos[r]];
            const double v = xb[r * s->features + nd->feature];
            pos[r] = child(nd, (v <= nd->threshold) | (nd->missing_true & (v != v)));
        }
}

/* one leaf's weights into a row's scores by the aggregate function */
static inline void aggregate(const x86_tree_state *s, double *score, uint8_t *has, int32_t leaf) {
    const double *w = s->weights + (int64_t)leaf * s->k;
    const uint8_t *h = s->has + (int64_t)leaf * s->k;
    for (int32_t c = 0; c < s->k; ++c) {
        if (s->aggregate == ML_SUM || s->aggregate == ML_AVERAGE) {
            score[c] = rt(score[c] + w[c], s->f32);
        } else {
            const int better = s->aggregate == ML_MIN ? w[c] < score[c] : w[c] > score[c];
            if (h[c] && (!has[c] || better)) score[c] = w[c];
        }
        has[c] |= h[c];
    }
}

/* ONNX Runtime's expansion of one score v into two classes (ml.py's _one_score) */
static void one_score(double v, int32_t how, int extra, float *z) {
    if (how == ML_PROBIT) {
        z[0] = ml_probit((float)v);
        z[1] = 0;
        return;
    }
    double lo = extra >= 2 ? -v : 1.0 - v, hi = v;
    if (how == ML_LOGISTIC) {
        hi = ml_logistic(v);
        lo = 1.0 - hi;
    }
    z[0] = (float)(extra < 0 ? v : lo);
    z[1] = (float)(extra < 0 ? 0 : hi);
}

/* two classes (ml_trees.py's _binary_scores) */
static void finish_binary(const x86_tree_state *s, const double *score, const uint8_t *has, int64_t *y, float *z) {
    const int f = s->f32;
    double s0 = score[0], s1 = score[1];
    const int h0 = has[0], h1 = has[1];
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
        *y = pos > 0;  /* (ONNX Runtime gives 1 or 0 here, not the labels) */
    }
    const double v0 = h0 ? s0 : 0.0, v1 = h1 ? s1 : 0.0;
    if (!two) {
        one_score(v0, s->transform, extra, z);
        return;
    }
    double both[2] = {v0, v1};
    ml_post_transform(both, 2, s->transform);
    z[0] = (float)both[0];
    z[1] = (float)both[1];
}

/* three classes or more: base values, the best voted class's label, the transformed scores */
static void finish_classes(const x86_tree_state *s, double *score, uint8_t *has, int64_t *y, float *z) {
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
    ml_post_transform(score, k, s->transform);
    for (int32_t c = 0; c < k; ++c) z[c] = (float)score[c];
}

static void finish_regressor(const x86_tree_state *s, double *score, const uint8_t *has, float *z) {
    const int32_t k = s->k;
    if (k == 1) {  /* one target: a single base value is its origin; PROBIT is the only transform */
        const double v = s->n_base == 1 ? rt(score[0] + s->base[0], s->f32) : score[0];
        z[0] = s->transform == ML_PROBIT ? ml_probit((float)v) : (float)v;
        return;
    }
    for (int32_t c = 0; c < k; ++c) {
        if (s->n_base == k) score[c] = rt(score[c] + s->base[c], s->f32);
        score[c] = has[c] ? score[c] : 0.0;  /* (no vote: 0, base or not) */
    }
    ml_post_transform(score, k, s->transform);
    for (int32_t c = 0; c < k; ++c) z[c] = (float)score[c];
}

typedef struct {
    x86_tree_state *s;
    const mnn_tensor *x;
    int64_t rows;
    int64_t *y;
    float *z;
} tree_job;

/* rows [r0, r0 + n) of the input as doubles */
static void load_block(const tree_job *j, double *xb, int64_t r0, int64_t n) {
    const int64_t F = j->s->features;
    if (j->x->dtype == MNN_FLOAT32) {
        const float *x = (const float *)j->x->data + r0 * F;
        for (int64_t i = 0; i < n * F; ++i) xb[i] = x[i];
        return;
    }
    for (int64_t r = 0; r < n; ++r)
        for (int64_t f = 0; f < F; ++f) xb[r * F + f] = ml_load(j->x->data, j->x->dtype, (r0 + r) * F + f);
}

static void tree_block(tree_job *j, int64_t r0, int worker) {
    x86_tree_state *s = j->s;
    const int32_t k = s->k;
    const int64_t n = j->rows - r0 < ML_BLOCK ? j->rows - r0 : ML_BLOCK;
    char *scratch = s->scratch + worker * s->scratch_stride;
    double *xb = (double *)scratch, *score = xb + ML_BLOCK * s->features;
    int32_t *pos = (int32_t *)(score + ML_BLOCK * k);
    uint8_t *has = (uint8_t *)(pos + ML_BLOCK);
    load_block(j, xb, r0, n);
    memset(score, 0, sizeof(double) * n * k);
    memset(has, 0, (size_t)(n * k));
    for (int32_t t = 0; t < s->n_trees; ++t) {
        for (int64_t r = 0; r < n; ++r) pos[r] = s->roots[t];
        if (s->all_leq)
            walk_leq(s, t, xb, n, pos);
        else
            walk_generic(s, t, xb, n, pos);
        for (int64_t r = 0; r < n; ++r) aggregate(s, score + r * k, has + r * k, s->nodes[pos[r]].leaf);
    }
    for (int64_t r = 0; r < n; ++r) {
        double *sc = score + r * k;
        uint8_t *h = has + r * k;
        if (s->aggregate == ML_AVERAGE)
            for (int32_t c = 0; c < k; ++c) sc[c] = rt(sc[c] / s->n_trees, s->f32);
        if (!s->classifier)
            finish_regressor(s, sc, h, j->z + (r0 + r) * k);
        else if (k == 2)
            finish_binary(s, sc, h, j->y + r0 + r, j->z + (r0 + r) * k);
        else
            finish_classes(s, sc, h, j->y + r0 + r, j->z + (r0 + r) * k);
    }
}

static void tree_range(void *ctx, int64_t lo, int64_t hi, int worker) {
    for (int64_t b = lo; b < hi; ++b) tree_block((tree_job *)ctx, b * ML_BLOCK, worker);
}

int x86_tree_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    x86_tree_state *s = (x86_tree_state *)state;
    int64_t rows, features;
    (void)n_in;
    (void)n_out;
    ml_rows(&ins[0], &rows, &features);
    if (features != s->features) {
        snprintf(s->msg, ML_MSG, "tree ensemble: prepared for %lld features, the input has %lld",
                 (long long)s->features, (long long)features);
        s->op.error = s->msg;
        return 1;
    }
    tree_job j = {s, &ins[0], rows, s->classifier ? (int64_t *)outs[0].data : NULL,
                  (float *)outs[s->classifier ? 1 : 0].data};
    const int64_t blocks = (rows + ML_BLOCK - 1) / ML_BLOCK;
    const int64_t work = (int64_t)ML_BLOCK * s->n_nodes;  /* about a block's cost */
    x86_pool->ranges(s->op.threads, blocks, work >= 65536 ? 1 : 65536 / work + 1, tree_range, &j);
    return 0;
}
